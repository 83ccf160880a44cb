"""Confluent's Python client on one side of Tributary's JsonSchemaConverter.

    sr_json.py produce BOOTSTRAP REGISTRY TOPIC N
        produces N records of ORDER_SCHEMA with confluent-kafka's
        JSONSerializer (values: order(i));
    sr_json.py consume BOOTSTRAP REGISTRY TOPIC N
        reads N records with JSONDeserializer (which validates them against
        the registered schema) and prints each as a JSON line, then the
        latest schema registered under TOPIC-value.
"""
import datetime
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

ORDER_SCHEMA = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "shop.Order", "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": "string"},
        "note": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
    },
    "required": ["id", "customer", "note", "tags", "ratio", "flag"],
})


def order(i):
    return {"id": i, "customer": "c%d" % i, "note": None if i % 2 == 0 else "n%d" % i,
            "tags": ["t", str(i)], "ratio": i / 4, "flag": i % 3 == 0}


def main():
    mode, bootstrap, registry, topic, n = sys.argv[1:6]
    n = int(n)
    client = SchemaRegistryClient({"url": registry})
    conf = {"subject.name.strategy": topic_subject_name_strategy}
    if mode == "produce":
        ser = JSONSerializer(ORDER_SCHEMA, client, conf=dict(conf, **{"auto.register.schemas": True}))
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(n):
            p.produce(topic, value=ser(order(i), SerializationContext(topic, MessageField.VALUE)))
        if p.flush(30) != 0:
            sys.exit("records not delivered")
        return
    deser = JSONDeserializer(None, schema_registry_client=client, conf=conf)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-json-" + topic,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=60)
    while got < n and datetime.datetime.now() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        print(json.dumps(deser(m.value(), SerializationContext(topic, MessageField.VALUE)), sort_keys=True))
        got += 1
    c.close()
    print(json.dumps({"latest": client.get_latest_version(topic + "-value").schema.schema_str}))


if __name__ == "__main__":
    main()
