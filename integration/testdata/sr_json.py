"""Confluent's Python client on one side of Tributary's JsonSchemaConverter.

    sr_json.py produce BOOTSTRAP REGISTRY TOPIC N
        produces N records of ORDER_SCHEMA with confluent-kafka's
        JSONSerializer (values: order(i));
    sr_json.py consume BOOTSTRAP REGISTRY TOPIC N
        reads N records with JSONDeserializer (which validates them against
        the registered schema) and prints each as a JSON line, then the
        latest schema registered under TOPIC-value.
"""
import json

from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

import sr_common

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
    s = sr_common.setup("sr-json")
    if s.mode == "produce":
        sr_common.produce(s, JSONSerializer(ORDER_SCHEMA, s.client, conf=s.serializer_conf), order)
        return
    sr_common.consume(s, JSONDeserializer(None, schema_registry_client=s.client, conf=s.deserializer_conf))


if __name__ == "__main__":
    main()
