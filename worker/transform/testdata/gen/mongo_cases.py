#!/usr/bin/env python3
"""mongo_cases.py (re)writes the MongoDB part of ../cases.json: records named
mongo_* and cases named mongo_* for ExtractNewDocumentState.

The change events are those Debezium 3.6.1's own MongoDB event builder wrote
(connectors/mongodb/testdata/golden-events.jsonl, JsonConverter form), plus
events with the same envelope whose `after` documents exercise the schema
inference (arrays of documents, mixed arrays, nested arrays, field names
that need adjusting). Run from the repository root:

    python3 worker/transform/testdata/gen/mongo_cases.py

then regenerate the goldens (go test ./integration -run TestTransformGoldens
-args -rewrite).
"""
import base64
import copy
import json
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(ROOT, "..", "cases.json")
EVENTS = os.path.join(ROOT, "..", "..", "..", "..", "connectors", "mongodb", "testdata", "golden-events.jsonl")


def schema(s):
    """A JsonConverter schema in cases.json's form."""
    if s is None:
        return None
    out = {"type": s["type"]}
    for k in ("optional", "name", "version", "doc", "parameters"):
        if s.get(k) not in (None, False):
            out[k] = s[k]
    if s["type"] == "struct":
        out["fields"] = [{"name": f["field"], "schema": schema(f)} for f in s["fields"]]
    if s["type"] == "array":
        out["valueSchema"] = schema(s["items"])
    if s["type"] == "map":
        out["keySchema"], out["valueSchema"] = schema(s["keys"]), schema(s["values"])
    if "default" in s and s["default"] is not None:
        out["default"] = value(s, s["default"])
    return out


def value(s, v):
    if v is None:
        return None
    t = s["type"]
    if t in ("int8", "int16", "int32", "int64"):
        return {t: str(v)}
    if t in ("float32", "float64"):
        return {t: repr(float(v))}
    if t == "boolean":
        return {"boolean": v}
    if t == "string":
        return {"string": v}
    if t == "bytes":
        return {"bytes": v}
    if t == "array":
        return {"array": [value(s["items"], e) for e in v]}
    if t == "struct":
        return {"struct": [[f["field"], value(f, v.get(f["field"]))] for f in s["fields"]]}
    raise ValueError(t)


def record(ev, offset):
    r = {"topic": ev["topic"], "partition": 0, "offset": offset, "timestamp": 1705000000000,
         "keySchema": schema(ev["key"]["schema"]), "key": value(ev["key"]["schema"], ev["key"]["payload"]),
         "headers": []}
    if ev["value"] is None:
        r["valueSchema"], r["value"] = None, None
    else:
        r["valueSchema"] = schema(ev["value"]["schema"])
        r["value"] = value(ev["value"]["schema"], ev["value"]["payload"])
    return r


def main():
    with open(CASES) as f:
        cases = json.load(f)
    for k in [k for k in cases["records"] if k.startswith("mongo_")]:
        del cases["records"][k]
    cases["cases"] = [c for c in cases["cases"] if not c["name"].startswith("mongo_")]

    events = [json.loads(l) for l in open(EVENTS)]
    recs = {}
    names = {"c": "create", "u": "update", "d": "delete", "r": "read"}
    counts = {}
    for i, ev in enumerate(events):
        op = ev.get("op") or "x"
        counts[op] = counts.get(op, 0) + 1
        recs["mongo_%s%d" % (names.get(op, op), counts[op])] = record(ev, i)
    first = events[0]

    def event(after, key_id, topic=None, op="c", before=None, ud=None):
        ev = copy.deepcopy(first)
        if topic:
            ev["topic"] = topic
            ev["key"]["schema"]["name"] = topic + ".Key"
            ev["value"]["schema"]["name"] = topic + ".Envelope"
        ev["key"]["payload"]["id"] = key_id
        p = ev["value"]["payload"]
        p["after"], p["before"], p["op"], p["updateDescription"] = after, before, op, ud
        return ev

    oid = '{"$oid": "65a1b2c3d4e5f60718293a50"}'
    docs = {
        "mongo_scalars": ('{"_id": {"$oid": "65a1b2c3d4e5f60718293a50"}, "s": "x", "i32": 1, "i64": {"$numberLong": "9007199254740993"}, '
                          '"d": 1.5, "dec": {"$numberDecimal": "1234.5600"}, "dec2": {"$numberDecimal": "-1E+3"}, "date": {"$date": 1705000000123}, '
                          '"bin": {"$binary": "AAEC/w==", "$type": "00"}, "uuid": {"$binary": "q6vNze/wEjRWeJq83v8AEQ==", "$type": "04"}, '
                          '"t": true, "n": null, "re": {"$regex": "^a", "$options": "mi"}, "ts": {"$timestamp": {"t": 1705000000, "i": 3}}, '
                          '"js": {"$code": "f()"}, "nested": {"a": {"b": 1, "c": {"$date": 0}}}, "emptyDoc": {}, "tags": ["a", "b"], '
                          '"undef": {"$undefined": true}}', oid),
        "mongo_arrays": ('{"_id": 1, "items": [{"sku": "a", "qty": 1}, {"sku": "b", "price": 2.5}, {"sku": "c", "qty": 3, "meta": {"x": 1}}], '
                         '"matrix": [[1, 2], [3, 4]], "empty": [], "nums64": [{"$numberLong": "1"}], "dates": [{"$date": 0}], '
                         '"decs": [{"$numberDecimal": "1.5"}], "oids": [{"$oid": "65a1b2c3d4e5f60718293a4b"}], '
                         '"bins": [{"$binary": "AQ==", "$type": "00"}], "nulls": [null, "s"], "bools": [true, false], '
                         '"objs": [{"a": {"b": 1}}, {"a": {"c": "x"}}]}', "1"),
        "mongo_mixed": ('{"_id": 2, "mixed": [1, "two", 3.0, true, null]}', "2"),
        "mongo_conflict": ('{"_id": 3, "items": [{"v": 1}, {"v": "s"}]}', "3"),
        "mongo_docs_scalars": ('{"_id": 4, "arr": [{"a": 1}, 5]}', "4"),
        "mongo_nested_docs": ('{"_id": 5, "m": [[{"a": 1}], [{"a": 2}]]}', "5"),
        "mongo_names": ('{"_id": 6, "my-field": 1, "1st": "x", "ünï": true, "_private": 1, "sub": {"a-b": 2}}', "6"),
        "mongo_suffix": ('{"_id": 7, "rs": [1, 2], "other": [3]}', "7"),
        "mongo_deep": ('{"_id": 8, "a": {"b": {"c": 1, "d": [1, 2]}, "e": "x"}, "f": 1}', "8"),
        "mongo_string_id": ('{"_id": "k1", "v": {"$numberLong": "5"}}', '"k1"'),
        "mongo_doc_arrays_only": ('{"_id": 9, "items": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], "list": [1, 2, 3]}', "9"),
    }
    for i, (name, (after, key)) in enumerate(docs.items()):
        recs[name] = record(event(after, key), 100 + i)
    # An update event carrying only updateDescription, removing a field of
    # its own update, with dotted paths.
    recs["mongo_partial"] = record(event(None, "8", op="u", ud={
        "removedFields": ["gone", "x"], "updatedFields": '{"a.b.c": 2, "x": 1, "f": {"$numberLong": "3"}}', "truncatedArrays": None}), 200)
    recs["mongo_partial_no_fields"] = record(event(None, "8", op="u", ud={
        "removedFields": ["a"], "updatedFields": None, "truncatedArrays": []}), 201)
    # A delete without a pre-image and one with; a tombstone.
    recs["mongo_delete_plain"] = record(event(None, "8", op="d"), 202)
    recs["mongo_delete_before"] = record(event(None, "8", op="d", before='{"_id": 8, "f": 1}'), 203)
    tomb = copy.deepcopy(first)
    tomb["value"] = None
    tomb["key"]["payload"]["id"] = "8"
    recs["mongo_tombstone"] = record(tomb, 204)
    # Records the transformation passes on: a heartbeat, a record whose
    # value is not an envelope, a schemaless one.
    recs["mongo_heartbeat"] = {"topic": "__debezium-heartbeat.golden", "partition": 0, "offset": 300,
                               "keySchema": {"type": "struct", "name": "io.debezium.connector.common.ServerNameKey",
                                             "fields": [{"name": "serverName", "schema": {"type": "string"}}]},
                               "key": {"struct": [["serverName", {"string": "golden"}]]},
                               "valueSchema": {"type": "struct", "name": "io.debezium.connector.common.Heartbeat",
                                               "fields": [{"name": "ts_ms", "schema": {"type": "int64"}}]},
                               "value": {"struct": [["ts_ms", {"int64": "1705000000000"}]]}, "headers": []}
    recs["mongo_not_envelope"] = {"topic": "golden.shop.orders", "partition": 0, "offset": 301,
                                  "keySchema": {"type": "struct", "name": "golden.shop.orders.Key",
                                                "fields": [{"name": "id", "schema": {"type": "string"}}]},
                                  "key": {"struct": [["id", {"string": "1"}]]},
                                  "valueSchema": {"type": "struct", "name": "golden.shop.orders.Value",
                                                  "fields": [{"name": "op", "schema": {"type": "string", "optional": True}}]},
                                  "value": {"struct": [["op", {"string": "c"}]]}, "headers": []}
    recs["mongo_schemaless"] = {"topic": "golden.shop.orders", "partition": 0, "offset": 302, "keySchema": None,
                                "key": {"string": "k"}, "valueSchema": None, "value": {"string": "v"}, "headers": []}
    cases["records"].update(recs)

    every = sorted(recs)
    changes = [n for n in every if n not in ("mongo_heartbeat", "mongo_not_envelope", "mongo_schemaless")]
    deletes = ["mongo_delete1", "mongo_delete2", "mongo_delete_plain", "mongo_delete_before", "mongo_tombstone",
               "mongo_create1", "mongo_update2", "mongo_partial", "mongo_arrays"]
    cls = "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState"

    def raw(name, records, settings, mode="sink"):
        cfg = {"transforms": "unwrap", "transforms.unwrap.type": cls}
        cfg.update({"transforms.unwrap." + k: v for k, v in settings.items()})
        cases["cases"].append({"name": name, "mode": mode, "config": cfg, "records": records})

    raw("mongo_default", every, {})
    raw("mongo_source_mode", ["mongo_create1", "mongo_tombstone", "mongo_heartbeat"], {}, mode="source")
    raw("mongo_document_arrays", every, {"array.encoding": "document"})
    raw("mongo_document_arrays_case", ["mongo_arrays", "mongo_doc_arrays_only"], {"array.encoding": " Document "})
    raw("mongo_flatten", changes, {"flatten.struct": "true"})
    raw("mongo_flatten_delimiter", changes, {"flatten.struct": "true", "flatten.struct.delimiter": "__", "array.encoding": "document"})
    raw("mongo_rewrite", deletes, {"delete.tombstone.handling.mode": "rewrite",
                                   "add.fields": "op,ts_ms,source.ts_ms,source.db,source.collection,updateDescription.removedFields",
                                   "add.headers": "op,source.collection,db"})
    raw("mongo_rewrite_with_id", deletes, {"delete.tombstone.handling.mode": "rewrite",
                                           "delete.tombstone.handling.mode.rewrite-with-id": "true"})
    raw("mongo_rewrite_tombstone", deletes, {"delete.tombstone.handling.mode": "rewrite-with-tombstone", "add.headers": "op"})
    raw("mongo_drop", deletes, {"delete.tombstone.handling.mode": "drop"})
    raw("mongo_tombstone_mode", deletes, {"delete.tombstone.handling.mode": "tombstone", "add.headers": "op,ts_ms"})
    raw("mongo_delete_to_tombstone", deletes, {"delete.tombstone.handling.mode": "delete-to-tombstone"})
    raw("mongo_add_fields_prefix", ["mongo_create1", "mongo_read1", "mongo_partial", "mongo_delete_before", "mongo_tombstone", "mongo_not_envelope"],
        {"add.fields": "op,source.name:src,ts_ms", "add.fields.prefix": "meta_", "add.headers": "op,source.name:src,nope",
         "add.headers.prefix": "h_", "delete.tombstone.handling.mode": "rewrite-with-tombstone"})
    raw("mongo_add_updatedescription", ["mongo_update1", "mongo_partial", "mongo_create2"], {"add.fields": "updateDescription,updateDescription.updatedFields"})
    raw("mongo_avro", changes, {"field.name.adjustment.mode": "avro"})
    raw("mongo_avro_unicode", ["mongo_names", "mongo_scalars", "mongo_arrays", "mongo_partial", "mongo_create2"],
        {"field.name.adjustment.mode": "avro_unicode", "array.encoding": "document"})
    raw("mongo_route_by_field_ignored", ["mongo_create2"], {"route.by.field": "s"})
    raw("mongo_then_flatten_and_route", ["mongo_read1", "mongo_arrays"], {"flatten.struct": "true"})
    cases["cases"][-1]["config"].update({"transforms": "unwrap,route",
                                         "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                                         "transforms.route.regex": "golden\\.(.*)", "transforms.route.replacement": "lake.$1"})
    raw("mongo_bad_array_encoding", [], {"array.encoding": "list"})
    raw("mongo_bad_field_name_mode", [], {"field.name.adjustment.mode": "camel"})
    raw("mongo_bad_add_fields", [], {"add.fields": "a:b:c"})

    with open(CASES, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
