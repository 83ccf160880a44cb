package main

import (
	"testing"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/sdktest"
)

func connector() sdk.Connector {
	return sdk.SourceConnector[Config]{Class: "com.example.TickerConnector", Version: "0.1.0",
		NewTask: func(c Config) sdk.SourceTask { return &task{cfg: c} }}
}

func TestAcceptance(t *testing.T) {
	sdktest.RunSource(t, sdktest.SourceDriver{
		Connector: connector(),
		Config:    func(*testing.T) map[string]string { return map[string]string{"topic": "ticks", "interval.ms": "1"} },
	})
}
