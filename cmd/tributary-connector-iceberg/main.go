// Command tributary-connector-iceberg serves the Iceberg sink (Apache
// Iceberg's IcebergSinkConnector, with Tabular's upsert mode) as a plugin;
// workers start it from beside their tributary binary. It links
// apache/iceberg-go with its catalogs (REST, SQL on SQLite or PostgreSQL,
// Glue), S3 I/O and arrow-go's Parquet writer, which no other process
// needs (see cmd/tributary-connector-basic).
package main

import (
	"github.com/tributary-dev/tributary/connectors/iceberg"
	"github.com/tributary-dev/tributary/sdk"
)

func main() { sdk.Serve(iceberg.Connector()) }
