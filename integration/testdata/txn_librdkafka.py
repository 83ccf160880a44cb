"""Transactions through librdkafka (confluent-kafka), driven by
integration/broker_txn_clients_test.go.

Usage: txn_librdkafka.py BOOTSTRAP TOPIC

Commits a transaction of 100 records, aborts one of 50, commits one of 25
with the consumed offsets of a group (send_offsets_to_transaction), then reads
the topic back with a read_committed and a read_uncommitted consumer and
prints one JSON line with what each saw.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition


def produce_txn(p, topic, prefix, n, commit, offsets=None, group_meta=None):
    p.begin_transaction()
    for i in range(n):
        p.produce(topic, key=prefix.encode(), value=("%s-%d" % (prefix, i)).encode())
    p.flush(30)
    if offsets is not None:
        p.send_offsets_to_transaction(offsets, group_meta, 30)
    if commit:
        p.commit_transaction(30)
    else:
        p.abort_transaction(30)


def read_all(bootstrap, topic, isolation, group):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": isolation,
    })
    c.subscribe([topic])
    values = []
    deadline = time.time() + 30
    idle = 0
    while time.time() < deadline and idle < 6:
        m = c.poll(0.5)
        if m is None:
            idle += 1 if values else 0
            continue
        if m.error():
            continue
        idle = 0
        values.append(m.value().decode())
    c.close()
    return values


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "librdkafka-txn", "linger.ms": 5})
    p.init_transactions(30)
    produce_txn(p, topic, "commit", 100, True)
    produce_txn(p, topic, "abort", 50, False)
    # A consume-transform-produce step: the group's offsets go with the
    # transaction.
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "librdkafka-etl",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    msgs = []
    deadline = time.time() + 30
    while len(msgs) < 10 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            msgs.append(m)
    last = msgs[-1]
    offsets = [TopicPartition(topic, last.partition(), last.offset() + 1)]
    produce_txn(p, topic, "etl", 25, True, offsets, c.consumer_group_metadata())
    committed = c.committed([TopicPartition(topic, last.partition())], 30)
    c.close()
    print(json.dumps({
        "read_committed": read_all(bootstrap, topic, "read_committed", "rc"),
        "read_uncommitted": read_all(bootstrap, topic, "read_uncommitted", "ru"),
        "etl_committed_offset": committed[0].offset,
        "etl_expected_offset": last.offset() + 1,
    }))


if __name__ == "__main__":
    main()
