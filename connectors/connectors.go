package connectors

import (
	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/connectors/mongodb"
	"github.com/tributary-dev/tributary/sdk"
)

// All returns every first-party connector.
func All() []sdk.Connector {
	return []sdk.Connector{file.Source(), file.Sink(), datagen.Connector(), discard.Connector(), mongodb.Connector()}
}
