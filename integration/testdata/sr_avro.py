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

from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

import sr_common

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
    s = sr_common.setup("sr-avro")
    if s.mode == "produce":
        sr_common.produce(s, AvroSerializer(s.client, ORDER_SCHEMA, conf=s.serializer_conf), order)
        print(s.client.get_latest_version(s.topic + "-value").schema_id)
        return
    sr_common.consume(s, AvroDeserializer(s.client, conf=s.deserializer_conf), plain)


if __name__ == "__main__":
    main()
