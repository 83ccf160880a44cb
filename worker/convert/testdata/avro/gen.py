"""Records the golden bytes of worker/convert's AvroConverter tests with
Confluent's own Python serializer (confluent-kafka's AvroSerializer, which
encodes with fastavro) against its in-memory mock registry.

Each case's schema is the text Confluent's AvroData derives from the
Connect schema the Go test builds (avro_golden_test.go); the Go test checks
that its converter derives the same text, writes the same bytes and reads
them back field by field.

Run from the repository root (the venv .ci/run makes has confluent-kafka):
    ~/.cache/tributary/pyenv/bin/python worker/convert/testdata/avro/gen.py
"""
import datetime
import decimal
import json
import os

from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

DEC10 = ('{"type":"bytes","scale":2,"precision":10,"connect.version":1,'
         '"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},'
         '"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}')
DEC64 = ('{"type":"bytes","scale":3,"precision":64,"connect.version":1,'
         '"connect.parameters":{"scale":"3"},'
         '"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}')
TS = ('{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp",'
      '"logicalType":"timestamp-millis"}')

CASES = [
    ("primitives", "value",
     '{"type":"record","name":"Primitives","namespace":"test","fields":['
     '{"name":"i8","type":{"type":"int","connect.type":"int8"}},'
     '{"name":"i16","type":{"type":"int","connect.type":"int16"}},'
     '{"name":"i32","type":"int"},{"name":"i64","type":"long"},'
     '{"name":"f32","type":"float"},{"name":"f64","type":"double"},'
     '{"name":"b","type":"boolean"},{"name":"s","type":"string"},{"name":"raw","type":"bytes"},'
     '{"name":"os","type":["null","string"],"default":null},'
     '{"name":"oi","type":["null","int"],"default":null}],'
     '"connect.name":"test.Primitives"}',
     {"i8": -7, "i16": 3000, "i32": -100000, "i64": 1 << 40, "f32": 1.5, "f64": -2.25,
      "b": True, "s": "héllo", "raw": b"\x00\x01\xff", "os": None, "oi": 12}),
    ("logical", "value",
     '{"type":"record","name":"Logical","namespace":"test","fields":['
     '{"name":"dec","type":' + DEC10 + '},'
     '{"name":"dec64","type":' + DEC64 + '},'
     '{"name":"d","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}},'
     '{"name":"t","type":{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}},'
     '{"name":"ts","type":' + TS + '},'
     '{"name":"ots","type":["null",' + TS + '],"default":null},'
     '{"name":"mts","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}},'
     '{"name":"withdef","type":{"type":"int","connect.default":42},"default":42},'
     '{"name":"optdef","type":[{"type":"string","connect.default":"x"},"null"],"default":"x"}],'
     '"connect.name":"test.Logical"}',
     {"dec": decimal.Decimal("-123.45"), "dec64": decimal.Decimal("98765432109876.543"),
      "d": datetime.date(2026, 12, 6), "t": datetime.time(13, 14, 15, 678000),
      "ts": datetime.datetime(2026, 12, 6, 13, 14, 15, 678000, tzinfo=datetime.timezone.utc),
      "ots": None, "mts": 1796562855678123, "withdef": 7, "optdef": "y"}),
    ("debezium", "value",
     '{"type":"record","name":"Envelope","namespace":"dbserver1.public.orders","fields":['
     '{"name":"before","type":["null",{"type":"record","name":"Value","fields":['
     '{"name":"id","type":"int"},{"name":"name","type":["null","string"],"default":null},'
     '{"name":"price","type":["null",' + DEC10 + '],"default":null}],'
     '"connect.name":"dbserver1.public.orders.Value"}],"default":null},'
     '{"name":"after","type":["null","Value"],"default":null},'
     '{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":['
     '{"name":"version","type":"string"},{"name":"connector","type":"string"},{"name":"name","type":"string"},'
     '{"name":"ts_ms","type":"long"},'
     '{"name":"snapshot","type":[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,last,false,incremental"},'
     '"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false"},'
     '{"name":"db","type":"string"},{"name":"lsn","type":["null","long"],"default":null}],'
     '"connect.name":"io.debezium.connector.postgresql.Source"}},'
     '{"name":"op","type":"string"},{"name":"ts_ms","type":["null","long"],"default":null}],'
     '"connect.version":1,"connect.name":"dbserver1.public.orders.Envelope"}',
     {"before": None,
      "after": {"id": 1001, "name": "widget", "price": decimal.Decimal("19.99")},
      "source": {"version": "3.6.1.Final", "connector": "postgresql", "name": "dbserver1",
                 "ts_ms": 1796562855000, "snapshot": "true", "db": "inventory", "lsn": 23456789},
      "op": "r", "ts_ms": 1796562855123}),
    ("collections", "value",
     '{"type":"record","name":"Collections","namespace":"test","fields":['
     '{"name":"tags","type":{"type":"array","items":"string"}},'
     '{"name":"attrs","type":{"type":"map","values":"long"}},'
     '{"name":"codes","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":['
     '{"name":"key","type":"int"},{"name":"value","type":"string"}]}}}],'
     '"connect.name":"test.Collections"}',
     {"tags": ["a", "b"], "attrs": {"x": 1}, "codes": [{"key": 404, "value": "not found"}]}),
    ("key", "key", '"string"', "order-1001"),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    client = SchemaRegistryClient.new_client({"url": "mock://golden"})
    out = []
    for name, field, schema, value in CASES:
        ser = AvroSerializer(client, schema, conf={"auto.register.schemas": True,
                                                     "subject.name.strategy": topic_subject_name_strategy})
        mf = MessageField.KEY if field == "key" else MessageField.VALUE
        data = ser(value, SerializationContext("golden-" + name, mf))
        out.append({"name": name, "isKey": field == "key", "schema": schema, "hex": data.hex()})
    with open(os.path.join(here, "golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
