"""Reads an Iceberg table with DuckDB's iceberg extension (which applies
equality deletes), a third independent reader for the Iceberg sink's tests
and the reader of its benchmark.

Usage: duckdb_iceberg.py CONFIG_JSON TABLE [SQL]

CONFIG_JSON: {"catalog_db": <SQLite SQL catalog>, "catalog": <its name>,
"s3": {"endpoint", "key", "secret", "region"} (optional)}. The table's
current metadata file is looked up in the SQL catalog and read with
iceberg_scan. Without SQL, prints {"rows": [...]} rendered as
testdata/IcebergRead.java renders them; with SQL (where $TABLE stands for
the iceberg_scan), prints {"rows": ..., "seconds": ...}.

The extensions come from PyPI (duckdb-extension-iceberg, -avro, -httpfs
1.5.5, with duckdb 1.5.5): DuckDB's own INSTALL downloads them from
extensions.duckdb.org, which tests cannot reach.
"""
import datetime
import decimal
import glob
import json
import os
import sqlite3
import sys
import time

import duckdb


def connect():
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")
    site = os.path.dirname(os.path.dirname(duckdb.__file__))
    exts = glob.glob(os.path.join(site, "duckdb_extension_*", "extensions", "*", "*.duckdb_extension"))
    order = {"avro": 0, "httpfs": 1, "iceberg": 2}
    for e in sorted(exts, key=lambda p: order.get(os.path.basename(p).split(".")[0], 3)):
        name = os.path.basename(e).split(".")[0]
        if name in order:
            con.execute(f"LOAD '{e}'")
    con.execute("SET TimeZone = 'UTC'")
    return con


def render(v):
    if isinstance(v, dict):
        return {k: render(x) for k, x in v.items()}
    if isinstance(v, list):
        return [render(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            return v.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    return v


def main():
    cfg = json.loads(sys.argv[1])
    table = sys.argv[2]
    ns, name = table.rsplit(".", 1)
    db = sqlite3.connect("file:" + cfg["catalog_db"] + "?mode=ro", uri=True, timeout=30)
    (loc,) = db.execute("select metadata_location from iceberg_tables where catalog_name=? and table_namespace=? and table_name=?",
                        (cfg.get("catalog", "iceberg"), ns, name)).fetchone()
    con = connect()
    s3 = cfg.get("s3")
    if s3:
        endpoint = s3["endpoint"].split("://", 1)[-1]
        con.execute(f"""CREATE SECRET (TYPE S3, KEY_ID '{s3["key"]}', SECRET '{s3["secret"]}', REGION '{s3["region"]}',
            ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false)""")
    scan = f"iceberg_scan('{loc}')"
    if len(sys.argv) > 3:
        sql = sys.argv[3].replace("$TABLE", scan)
        start = time.perf_counter()
        rows = con.execute(sql).fetchall()
        print(json.dumps({"rows": [[render(x) for x in r] for r in rows], "seconds": time.perf_counter() - start}))
        return
    cur = con.execute(f"select * from {scan}")
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, (render(x) for x in r))) for r in cur.fetchall()]
    print(json.dumps({"rows": rows, "read_by": "DuckDB " + duckdb.__version__ + " iceberg extension"}))


if __name__ == "__main__":
    main()
