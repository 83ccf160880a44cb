"""Confluent's Python client on one side of Tributary's ProtobufConverter.

    sr_protobuf.py produce BOOTSTRAP REGISTRY TOPIC N
        produces N records of shop.Order (values: order(i)) then N of the
        nested shop.Order.Line (line(i)) with confluent-kafka's
        ProtobufSerializer, which registers shop/common.proto as a
        reference of shop/order.proto;
    sr_protobuf.py consume BOOTSTRAP REGISTRY TOPIC N MESSAGE
        reads N records with ProtobufDeserializer, its message class built
        from the latest schema of TOPIC-value as the registry serves it
        (format=serialized), and prints each as a JSON line: the message
        (json_format, field names as declared) and the hex of the message
        serialized again by Python's protobuf.
"""
import datetime
import decimal
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.schema_registry.confluent import meta_pb2  # noqa: F401 (registers confluent.field_meta)
from confluent_kafka.schema_registry.confluent.type import decimal_pb2  # noqa: F401
from confluent_kafka.schema_registry.confluent.type.decimal_utils import to_proto_decimal
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory, text_format
from google.protobuf import timestamp_pb2  # noqa: F401
from google.type import date_pb2, timeofday_pb2  # noqa: F401
import base64

COMMON = """
name: "shop/common.proto" package: "shop.common" syntax: "proto3"
message_type {
  name: "Address"
  field { name: "city" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "zip" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
}
"""

ORDER = """
name: "shop/order.proto" package: "shop" syntax: "proto3"
dependency: "shop/common.proto"
dependency: "google/protobuf/timestamp.proto"
dependency: "google/type/date.proto"
dependency: "google/type/timeofday.proto"
dependency: "confluent/type/decimal.proto"
dependency: "confluent/meta.proto"
message_type {
  name: "Order"
  field { name: "id" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 }
  field { name: "customer" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "note" number: 3 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 1 proto3_optional: true }
  field { name: "tags" number: 4 label: LABEL_REPEATED type: TYPE_STRING }
  field { name: "ratio" number: 5 label: LABEL_OPTIONAL type: TYPE_DOUBLE }
  field { name: "flag" number: 6 label: LABEL_OPTIONAL type: TYPE_BOOL }
  field { name: "counts" number: 7 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".shop.Order.CountsEntry" }
  field { name: "status" number: 8 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".shop.Order.Status" }
  field { name: "ship_to" number: 9 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".shop.common.Address" }
  field { name: "at" number: 10 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.protobuf.Timestamp" }
  field { name: "day" number: 11 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.type.Date" }
  field { name: "total" number: 12 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".confluent.type.Decimal"
          options { [confluent.field_meta] { params { key: "precision" value: "10" } params { key: "scale" value: "2" } } } }
  field { name: "email" number: 13 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0 }
  field { name: "phone" number: 14 label: LABEL_OPTIONAL type: TYPE_INT64 oneof_index: 0 }
  field { name: "delta" number: 15 label: LABEL_OPTIONAL type: TYPE_SINT32 }
  field { name: "count" number: 16 label: LABEL_OPTIONAL type: TYPE_UINT32 }
  field { name: "lines" number: 17 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".shop.Order.Line" }
  field { name: "f32" number: 18 label: LABEL_OPTIONAL type: TYPE_FLOAT }
  field { name: "raw" number: 19 label: LABEL_OPTIONAL type: TYPE_BYTES }
  field { name: "small" number: 20 label: LABEL_OPTIONAL type: TYPE_INT32
          options { [confluent.field_meta] { params { key: "connect.type" value: "int16" } } } }
  field { name: "at_time" number: 21 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".google.type.TimeOfDay" }
  nested_type {
    name: "CountsEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
    options { map_entry: true }
  }
  nested_type {
    name: "Line"
    field { name: "sku" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "qty" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
  }
  enum_type { name: "Status" value { name: "ACTIVE" number: 0 } value { name: "INACTIVE" number: 1 } }
  oneof_decl { name: "contact" }
  oneof_decl { name: "_note" }
}
"""


def message_classes():
    pool = descriptor_pool.Default()
    for text in (COMMON, ORDER):
        pool.Add(text_format.Parse(text, descriptor_pb2.FileDescriptorProto()))
    order = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
    line = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order.Line"))
    return order, line


def order(cls, i):
    m = cls(id=i, customer="c%d" % i, tags=["t", str(i)], ratio=i / 4, flag=i % 3 == 0,
            status=i % 2, delta=-i, count=4000000000 + i, f32=1.5, raw=bytes([i, 255]), small=-i)
    if i % 2 == 1:
        m.note = "n%d" % i
    m.counts["k"] = i
    m.ship_to.city = "city%d" % i
    m.ship_to.zip = 1000 + i
    m.at.FromMilliseconds(1717171717000 + i)
    m.day.year, m.day.month, m.day.day = 2024, 2, 1 + i
    m.at_time.hours, m.at_time.minutes, m.at_time.seconds, m.at_time.nanos = 13, 5, i, 7000000
    m.total.CopyFrom(to_proto_decimal(decimal.Decimal("%d.%02d" % (i - 3, i))))
    if i % 2 == 0:
        m.email = "e%d@x" % i
    else:
        m.phone = 33000 + i
    ln = m.lines.add()
    ln.sku, ln.qty = "s%d" % i, i
    return m


def main():
    mode, bootstrap, registry, topic, n = sys.argv[1:6]
    n = int(n)
    client = SchemaRegistryClient({"url": registry})
    conf = {"subject.name.strategy": topic_subject_name_strategy}
    if mode == "produce":
        order_cls, line_cls = message_classes()
        ser = ProtobufSerializer(order_cls, client, conf=dict(conf, **{"auto.register.schemas": True}))
        line_ser = ProtobufSerializer(line_cls, client, conf=dict(conf, **{"auto.register.schemas": True}))
        p = Producer({"bootstrap.servers": bootstrap})
        ctx = SerializationContext(topic, MessageField.VALUE)
        for i in range(n):
            p.produce(topic, value=ser(order(order_cls, i), ctx))
        for i in range(n):
            p.produce(topic, value=line_ser(line_cls(sku="l%d" % i, qty=i), ctx))
        if p.flush(30) != 0:
            sys.exit("records not delivered")
        return
    name = sys.argv[6]
    latest = client.get_latest_version(topic + "-value", fmt="serialized")
    pool = descriptor_pool.DescriptorPool()
    for dep in ("google/protobuf/descriptor.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto", "google/type/date.proto",
                "google/type/timeofday.proto", "confluent/type/decimal.proto", "confluent/meta.proto"):
        fdp = descriptor_pb2.FileDescriptorProto()
        descriptor_pool.Default().FindFileByName(dep).CopyToProto(fdp)
        pool.Add(fdp)
    fdp = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(latest.schema.schema_str))
    fdp.name = "tributary.proto"
    pool.Add(fdp)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    deser = ProtobufDeserializer(cls, conf=dict(conf, **{"use.deprecated.format": False}), schema_registry_client=client)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-protobuf-" + topic,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=60)
    while got < n and datetime.datetime.now() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        msg = deser(m.value(), SerializationContext(topic, MessageField.VALUE))
        print(json.dumps({"message": json_format.MessageToDict(msg, preserving_proto_field_name=True),
                          "payload": msg.SerializeToString(deterministic=True).hex()}, sort_keys=True))
        got += 1
    c.close()


if __name__ == "__main__":
    main()
