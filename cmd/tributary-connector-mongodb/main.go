// Command tributary-connector-mongodb serves the MongoDB source (Debezium's
// MongoDbConnector) as a plugin; workers start it from beside their
// tributary binary. It links the MongoDB driver, which no other process
// needs (see cmd/tributary-connector-basic).
package main

import (
	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/sdk"
)

func main() { sdk.Serve(mongodb.Connector()) }
