// Command tributary-connector-basic serves the first-party connectors that
// need nothing beyond the standard library: FileStreamSource,
// FileStreamSink, Datagen and DiscardSink, and the MirrorMaker 2
// connectors (which need franz-go only, already linked by every
// tributary process). Workers start it as a plugin,
// like every tributary-connector-* executable beside their tributary
// binary; it is not run by hand.
//
// Each family of first-party connectors has an executable of its own,
// linking its own libraries only: Go runs the init of every package a
// binary links in every process it starts, so one binary for all of them
// made every process pay for the PostgreSQL and MongoDB drivers,
// aws-sdk-go-v2 and arrow-go (docs/benchmarks.md, "Idle memory").
package main

import (
	"github.com/tributary-dev/tributary/connectors/datagen"
	"github.com/tributary-dev/tributary/connectors/discard"
	"github.com/tributary-dev/tributary/connectors/file"
	"github.com/tributary-dev/tributary/connectors/mirror"
	"github.com/tributary-dev/tributary/sdk"
)

func main() {
	sdk.Serve(append([]sdk.Connector{file.Source(), file.Sink(), datagen.Connector(), discard.Connector()}, mirror.Connectors()...)...)
}
