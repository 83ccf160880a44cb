"""Confluent's Python client on one side of Tributary's AvroConverter.

    sr_avro.py produce BOOTSTRAP REGISTRY TOPIC N
        produces N records of ORDER_SCHEMA with confluent-kafka's
        AvroSerializer (values: order(i)) and prints the schema id;
    sr_avro.py consume BOOTSTRAP REGISTRY TOPIC N
        reads N records with AvroDeserializer and prints each value as a
        JSON line (decimals as strings, dates and times in ISO 8601), then
        the latest schema registered under TOPIC-value.
"""
import datetime
import decimal
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

ORDER_SCHEMA = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "placed", "type": {"type": "int", "logicalType": "date"}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "ratio", "type": "double"},
        {"name": "flag", "type": "boolean"},
        {"name": "choice", "type": ["null", "string", "long"], "default": None},
    ]})

EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def order(i):
    return {
        "id": i, "customer": "c%d" % i,
        "amount": decimal.Decimal(i * 100 + 5) / 100,
        "placed": datetime.date(2026, 1, 1) + datetime.timedelta(days=i),
        "created": EPOCH + datetime.timedelta(seconds=i, milliseconds=i),
        "note": None if i % 2 == 0 else "n%d" % i,
        "tags": ["t", str(i)], "attrs": {"a": i},
        "status": "PAID" if i % 2 else "NEW",
        "ratio": i / 4, "flag": i % 3 == 0,
        "choice": [None, "s%d" % i, i * 1000][i % 3],
    }


def plain(v):
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.date, datetime.time, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    return v


def main():
    mode, bootstrap, registry, topic, n = sys.argv[1:6]
    n = int(n)
    client = SchemaRegistryClient({"url": registry})
    conf = {"subject.name.strategy": topic_subject_name_strategy}
    if mode == "produce":
        ser = AvroSerializer(client, ORDER_SCHEMA, conf=dict(conf, **{"auto.register.schemas": True}))
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(n):
            p.produce(topic, value=ser(order(i), SerializationContext(topic, MessageField.VALUE)))
        if p.flush(30) != 0:
            sys.exit("records not delivered")
        print(client.get_latest_version(topic + "-value").schema_id)
        return
    deser = AvroDeserializer(client, conf=conf)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-avro-" + topic,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=60)
    while got < n and datetime.datetime.now() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        v = deser(m.value(), SerializationContext(topic, MessageField.VALUE))
        print(json.dumps(plain(v), sort_keys=True))
        got += 1
    c.close()
    print(json.dumps({"latest": client.get_latest_version(topic + "-value").schema.schema_str}))


if __name__ == "__main__":
    main()
