// Command tributary-connector-postgres serves the PostgreSQL CDC source
// (Debezium's PostgresConnector) as a plugin; workers start it from beside
// their tributary binary. It links pgx, which no other process needs
// (see cmd/tributary-connector-basic).
package main

import (
	"github.com/tributary-dev/tributary/connectors/postgres"
	"github.com/tributary-dev/tributary/sdk"
)

func main() { sdk.Serve(postgres.Connector()) }
