#!/usr/bin/env python3
"""Reads files written by the S3 sink with readers from other projects than
the writer's (pyarrow for Parquet, fastavro for Avro) and prints, as JSON,
the column types and the rows. Used by integration/s3_sink_test.go and
integration/lake_e2e_test.go (parquet-dir: every file under a directory)."""
import base64
import datetime
import decimal
import json
import sys


def plain(v):
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, datetime.datetime):
        return {"timestamp": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"time": v.isoformat()}
    if isinstance(v, datetime.timedelta):
        return {"time": str(v)}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "parquet":
        import pyarrow.parquet as pq
        t = pq.read_table(path)
        out = {"types": {f.name: str(f.type) for f in t.schema},
               "nullable": {f.name: f.nullable for f in t.schema},
               "rows": plain(t.to_pylist())}
    elif kind == "parquet-dir":
        import os
        import pyarrow.parquet as pq
        files = []
        for root, _, names in sorted(os.walk(path)):
            for name in sorted(names):
                f = os.path.join(root, name)
                t = pq.read_table(f)
                files.append({"path": os.path.relpath(f, path),
                              "types": {c.name: str(c.type) for c in t.schema},
                              "nullable": {c.name: c.nullable for c in t.schema},
                              "rows": plain(t.to_pylist())})
        out = {"files": files}
    elif kind == "avro":
        import fastavro
        with open(path, "rb") as f:
            r = fastavro.reader(f)
            out = {"schema": r.writer_schema, "codec": r.codec, "rows": plain(list(r))}
    elif kind == "duckdb":
        import duckdb
        rows = duckdb.sql(sys.argv[3].replace("$PATH", path)).fetchall()
        out = {"rows": plain([list(r) for r in rows])}
    else:
        raise SystemExit("unknown kind " + kind)
    json.dump(out, sys.stdout)


main()
