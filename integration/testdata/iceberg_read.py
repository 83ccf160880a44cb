"""Reads an Iceberg table with pyiceberg (PyPI), an independent reader for
Tributary's Iceberg sink tests.

Usage: iceberg_read.py CONFIG_JSON TABLE

CONFIG_JSON holds the SqlCatalog properties (uri, warehouse, s3.*). Prints
one JSON object: the schema (name, type, required), the identifier fields,
the current snapshot's summary, the files, and the rows. pyiceberg 0.12
scans tables with position deletes but refuses equality deletes ("does not
yet support equality deletes"); for such a table the rows are computed
here from pyiceberg's own reading of the manifests (inspect.entries: each
live file, its content, sequence number and equality ids) and pyarrow's
reading of the Parquet files, by the spec's rule: an equality delete
removes the rows whose id columns equal one of its rows in data files of a
strictly lower data sequence number. Rows are rendered as
testdata/IcebergRead.java renders them.
"""
import datetime
import decimal
import json
import sys

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog


def render(v):
    if isinstance(v, dict):
        return {k: render(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and isinstance(v[0], tuple):  # a map column
            return {str(k): render(x) for k, x in v}
        return [render(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            return v.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, datetime.time):
        return v.strftime("%H:%M:%S.%f")
    if isinstance(v, bytes):
        return v.hex()
    return v


def main():
    props = json.loads(sys.argv[1])
    cat = SqlCatalog(props.pop("catalog-name", "iceberg"), **props)
    tbl = cat.load_table(sys.argv[2])
    schema = tbl.schema()
    out = {
        "schema": [{"name": f.name, "type": str(f.field_type), "required": f.required} for f in schema.fields],
        "identifier": sorted(schema.identifier_field_names()),
        "summary": {},
        "snapshots": len(tbl.metadata.snapshots),
    }
    snap = tbl.current_snapshot()
    if snap is None:
        out.update(rows=[], data_files=0, equality_delete_files=0, position_delete_files=0, read_by="empty")
        print(json.dumps(out))
        return
    out["summary"] = {k: v for k, v in snap.summary.additional_properties.items()}
    out["summary"]["operation"] = snap.summary.operation.value
    entries = tbl.inspect.entries().to_pylist()
    live = [e for e in entries if e["status"] != 2]
    data = [e for e in live if e["data_file"]["content"] == 0]
    pos = [e for e in live if e["data_file"]["content"] == 1]
    eq = [e for e in live if e["data_file"]["content"] == 2]
    out.update(data_files=len(data), position_delete_files=len(pos), equality_delete_files=len(eq))
    io = tbl.io
    if not eq:
        rows = tbl.scan().to_arrow().to_pylist()
        out["read_by"] = "pyiceberg scan"
    else:
        if pos:
            raise SystemExit("position and equality deletes together: not handled here")
        names = {f.field_id: f.name for f in schema.fields}
        deletes = []  # (sequence number, id column names, set of key tuples)
        for e in eq:
            cols = [names[i] for i in e["data_file"]["equality_ids"]]
            with io.new_input(e["data_file"]["file_path"]).open() as f:
                keys = pq.read_table(f, columns=cols).to_pylist()
            deletes.append((e["sequence_number"], cols, {tuple(k[c] for c in cols) for k in keys}))
        rows = []
        for e in data:
            with io.new_input(e["data_file"]["file_path"]).open() as f:
                t = pq.read_table(f)
            seq = e["sequence_number"]
            for r in t.to_pylist():
                if any(dseq > seq and tuple(r.get(c) for c in cols) in keys for dseq, cols, keys in deletes):
                    continue
                rows.append({f.name: r.get(f.name) for f in schema.fields})
        out["read_by"] = "pyiceberg manifests + pyarrow, equality deletes applied by the spec's rule"
    out["rows"] = [render(r) for r in rows]
    # Every file any snapshot references (for the crash tests' count of
    # files left unreferenced).
    refs = set()
    for s in tbl.metadata.snapshots:
        for m in s.manifests(io=tbl.io):
            for e in m.fetch_manifest_entry(io=tbl.io, discard_deleted=False):
                refs.add(e.data_file.file_path)
    out["referenced_files"] = sorted(refs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
