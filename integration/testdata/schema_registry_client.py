"""Confluent's Python client (confluent-kafka with its schema registry
extras) against Tributary's bundled schema registry and broker.

Usage: schema_registry_client.py REGISTRY_URL BOOTSTRAP TOPIC

Registers, looks up and checks compatibility with SchemaRegistryClient,
produces Avro and JSON Schema records with Confluent's serializers and
consumes them back with its deserializers, and prints what it saw as one
JSON object on stdout for the Go test to check.
"""
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import (Schema, SchemaReference,
                                             SchemaRegistryClient)
from confluent_kafka.schema_registry.avro import (AvroDeserializer,
                                                  AvroSerializer)
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import (JSONDeserializer,
                                                         JSONSerializer)
from confluent_kafka.serialization import MessageField, SerializationContext

url, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
client = SchemaRegistryClient({"url": url})
out = {}

USER_V1 = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
]})
USER_V2 = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "email", "type": ["null", "string"], "default": None},
]})
USER_BAD = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [
    {"name": "id", "type": "int"},
    {"name": "name", "type": "string"},
]})


def error(fn):
    try:
        fn()
    except SchemaRegistryError as e:
        return {"http_status": e.http_status_code, "error_code": e.error_code, "message": e.error_message}
    return None


# Avro: the serializer auto-registers v1 under TOPIC-value.
subject = topic + "-value"
from decimal import Decimal
ser = AvroSerializer(client, USER_V1)
producer = Producer({"bootstrap.servers": bootstrap})
sent = []
for i in range(10):
    rec = {"id": i, "name": "user-%d" % i, "amount": Decimal("%d.25" % i)}
    value = ser(rec, SerializationContext(topic, MessageField.VALUE))
    producer.produce(topic, key=str(i).encode(), value=value)
    sent.append({"id": i, "name": rec["name"], "amount": str(rec["amount"])})
producer.flush(30)
out["avro_sent"] = sent

v1 = client.get_latest_version(subject)
out["v1"] = {"id": v1.schema_id, "version": v1.version}
out["v1_compatible_v2"] = client.test_compatibility(subject, Schema(USER_V2, "AVRO"))
out["v1_compatible_bad"] = client.test_compatibility(subject, Schema(USER_BAD, "AVRO"))
out["register_bad"] = error(lambda: client.register_schema(subject, Schema(USER_BAD, "AVRO")))
out["v2_id"] = client.register_schema(subject, Schema(USER_V2, "AVRO"))
# The same schema again, and under another subject: the same id.
out["v2_again_id"] = client.register_schema(subject, Schema(USER_V2, "AVRO"))
out["v2_other_subject_id"] = client.register_schema("other-" + subject, Schema(USER_V2, "AVRO"))
looked = client.lookup_schema(subject, Schema(USER_V1, "AVRO"))
out["lookup_v1"] = {"id": looked.schema_id, "version": looked.version}
out["versions"] = client.get_versions(subject)
out["schema_by_id"] = json.loads(client.get_schema(v1.schema_id).schema_str)["name"]
out["subjects"] = sorted(client.get_subjects())
out["lookup_missing"] = error(lambda: client.lookup_schema(subject, Schema(USER_BAD, "AVRO")))
out["missing_subject"] = error(lambda: client.get_latest_version("no-such-subject"))

# Consume what the serializer wrote, with Confluent's deserializer (it
# fetches the writer schema by the id in each record).
de = AvroDeserializer(client)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-py", "auto.offset.reset": "earliest"})
consumer.subscribe([topic])
got = []
while len(got) < 10:
    m = consumer.poll(30)
    if m is None:
        break
    if m.error():
        raise SystemExit(str(m.error()))
    v = de(m.value(), SerializationContext(topic, MessageField.VALUE))
    got.append({"id": v["id"], "name": v["name"], "amount": str(v["amount"])})
consumer.close()
out["avro_received"] = got

# Compatibility levels.
out["set_none"] = client.set_compatibility(subject, "NONE")
out["get_subject_level"] = client.get_compatibility(subject)
out["get_global_level"] = client.get_compatibility()
out["register_bad_none"] = client.register_schema(subject, Schema(USER_BAD, "AVRO"))
client.set_compatibility(subject, "FULL_TRANSITIVE")
out["full_transitive_v2"] = client.test_compatibility(subject, Schema(USER_V2, "AVRO"), version="1")

# References: an Avro record that uses a named type from another subject.
ADDRESS = json.dumps({"type": "record", "name": "Address", "namespace": "ex", "fields": [{"name": "city", "type": "string"}]})
PERSON = json.dumps({"type": "record", "name": "Person", "namespace": "ex", "fields": [{"name": "home", "type": "ex.Address"}]})
addr_id = client.register_schema("address", Schema(ADDRESS, "AVRO"))
person_id = client.register_schema("person", Schema(PERSON, "AVRO", [SchemaReference("ex.Address", "address", 1)]))
person = client.get_schema(person_id)
out["references"] = [{"name": r.name, "subject": r.subject, "version": r.version} for r in person.references]
out["referenced_delete"] = error(lambda: client.delete_version("address", 1))

# JSON Schema through Confluent's JSON serializer and deserializer.
ORDER = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
                    "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}, "required": ["id"]})
jtopic = topic + "-json"
jser = JSONSerializer(ORDER, client)
for i in range(3):
    producer.produce(jtopic, value=jser({"id": i, "item": "thing-%d" % i}, SerializationContext(jtopic, MessageField.VALUE)))
producer.flush(30)
jde = JSONDeserializer(ORDER, schema_registry_client=client)
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-py-json", "auto.offset.reset": "earliest"})
consumer.subscribe([jtopic])
jgot = []
while len(jgot) < 3:
    m = consumer.poll(30)
    if m is None:
        break
    jgot.append(jde(m.value(), SerializationContext(jtopic, MessageField.VALUE)))
consumer.close()
out["json_received"] = jgot
out["json_type"] = client.get_latest_version(jtopic + "-value").schema.schema_type
ORDER_NARROW = json.dumps({"title": "Order", "type": "object",
                           "properties": {"id": {"type": "string"}, "item": {"type": "string"}}, "required": ["id"]})
out["json_compatible_narrow"] = client.test_compatibility(jtopic + "-value", Schema(ORDER_NARROW, "JSON"))

# Protobuf: register and check compatibility.
PROTO_V1 = 'syntax = "proto3";\npackage ex;\nmessage Event {\n  string id = 1;\n  int64 at = 2;\n}\n'
PROTO_V2 = 'syntax = "proto3";\npackage ex;\nmessage Event {\n  string id = 1;\n  int64 at = 2;\n  string source = 3;\n}\n'
PROTO_BAD = 'syntax = "proto3";\npackage ex;\nmessage Event {\n  string id = 1;\n  string at = 2;\n}\n'
out["proto_id"] = client.register_schema("events-value", Schema(PROTO_V1, "PROTOBUF"))
out["proto_compatible_v2"] = client.test_compatibility("events-value", Schema(PROTO_V2, "PROTOBUF"))
out["proto_compatible_bad"] = client.test_compatibility("events-value", Schema(PROTO_BAD, "PROTOBUF"))
out["proto_type"] = client.get_latest_version("events-value").schema.schema_type
out["invalid_proto"] = error(lambda: client.register_schema("events-value", Schema("message {", "PROTOBUF")))

# Deletes: soft, then permanent.
out["soft_delete"] = client.delete_subject("other-" + subject)
out["hard_delete_first"] = error(lambda: client.delete_subject(subject, permanent=True))
out["hard_delete"] = client.delete_subject("other-" + subject, permanent=True)
out["subjects_after"] = sorted(client.get_subjects())

print(json.dumps(out))
