"""What the sr_*.py scripts (Confluent's Python client on one side of a
Tributary converter) share: the command line, the clients' settings and
the produce and consume loops. Each script is run as

    sr_FORMAT.py produce|consume BOOTSTRAP REGISTRY TOPIC N

and brings its own schema, records, serializer and deserializer:

    s = sr_common.setup("sr-avro")
    if s.mode == "produce":
        sr_common.produce(s, AvroSerializer(s.client, SCHEMA, conf=s.serializer_conf), record)
    else:
        sr_common.consume(s, AvroDeserializer(s.client, conf=s.deserializer_conf))
"""
import collections
import datetime
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import SchemaRegistryClient, topic_subject_name_strategy
from confluent_kafka.serialization import MessageField, SerializationContext

Setup = collections.namedtuple("Setup", [
    "mode",               # "produce" or "consume"
    "topic",              # the topic; the schema's subject is TOPIC-value
    "n",                  # how many records to produce or consume
    "client",             # the SchemaRegistryClient of REGISTRY
    "serializer_conf",    # a serializer's conf: TopicNameStrategy, schemas registered
    "deserializer_conf",  # a deserializer's conf: TopicNameStrategy
    "producer_conf",      # a Producer's config
    "consumer_conf",      # a Consumer's config: group NAME-TOPIC, from the earliest offset
])


def setup(name, argv=None):
    """The Setup of the command line argv (sys.argv by default); name
    prefixes the consumer group."""
    mode, bootstrap, registry, topic, n = (argv or sys.argv)[1:6]
    if mode not in ("produce", "consume"):
        sys.exit("mode %r: want produce or consume" % mode)
    strategy = {"subject.name.strategy": topic_subject_name_strategy}
    return Setup(
        mode=mode, topic=topic, n=int(n),
        client=SchemaRegistryClient({"url": registry}),
        serializer_conf=dict(strategy, **{"auto.register.schemas": True}),
        deserializer_conf=strategy,
        producer_conf={"bootstrap.servers": bootstrap},
        consumer_conf={"bootstrap.servers": bootstrap, "group.id": name + "-" + topic,
                       "auto.offset.reset": "earliest", "enable.auto.commit": False},
    )


def produce(s, serialize, record):
    """Produces record(0) … record(N-1), each serialized as a value of
    the topic, and waits until every one is delivered."""
    p = Producer(s.producer_conf)
    for i in range(s.n):
        p.produce(s.topic, value=serialize(record(i), SerializationContext(s.topic, MessageField.VALUE)))
    if p.flush(30) != 0:
        sys.exit("records not delivered")


def consume(s, deserialize, shown=lambda v: v):
    """Reads N records (for 60 s at the most) and prints each value,
    deserialized and made JSON by shown, as a JSON line; then the latest
    schema registered under TOPIC-value as {"latest": schema}."""
    c = Consumer(s.consumer_conf)
    c.subscribe([s.topic])
    got = 0
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=60)
    while got < s.n and datetime.datetime.now() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        v = deserialize(m.value(), SerializationContext(s.topic, MessageField.VALUE))
        print(json.dumps(shown(v), sort_keys=True))
        got += 1
    c.close()
    print(json.dumps({"latest": s.client.get_latest_version(s.topic + "-value").schema.schema_str}))
