// Command tributary-connector-s3 serves the S3 sink (Confluent's
// S3SinkConnector) as a plugin; workers start it from beside their
// tributary binary. It links aws-sdk-go-v2 and arrow-go's Parquet writer,
// which no other process needs (see cmd/tributary-connector-basic).
package main

import (
	s3sink "github.com/tributary-dev/tributary/connectors/s3"
	"github.com/tributary-dev/tributary/sdk"
)

func main() { sdk.Serve(s3sink.Connector()) }
