package main

import (
	"testing"

	"github.com/tributary-dev/tributary/sdk/sdktest"
)

func TestAcceptance(t *testing.T) {
	sdktest.RunSource(t, sdktest.SourceDriver{
		Connector: connector(),
		Config:    func(*testing.T) map[string]string { return map[string]string{"topic": "ticks", "interval.ms": "1"} },
	})
}
