package connectors

import (
	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/connectors/iceberg"
	"github.com/tributary-dev/tributary/connectors/mirror"
	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/connectors/postgres"
	s3sink "github.com/tributary-dev/tributary/connectors/s3"
	"github.com/tributary-dev/tributary/sdk"
)

// All returns every first-party connector.
func All() []sdk.Connector {
	return append([]sdk.Connector{file.Source(), file.Sink(), datagen.Connector(), discard.Connector(), postgres.Connector(), mongodb.Connector(), s3sink.Connector(), iceberg.Connector()}, mirror.Connectors()...)
}
