// Package sdktest is the acceptance kit connector authors run from their
// own tests, like net/http/httptest for handlers:
//
//	func TestAcceptance(t *testing.T) {
//		sdktest.RunSource(t, sdktest.SourceDriver{
//			Connector: mysource.Connector(),
//			Config: func(t *testing.T) map[string]string {
//				return map[string]string{"topic": "t", "file": filepath.Join(t.TempDir(), "in")}
//			},
//			Seed: func(t *testing.T, cfg map[string]string, n int) { /* make n records available */ },
//		})
//	}
//
// RunSource checks the specification (valid Kafka Connect config
// definitions), config validation (each missing required key, and each
// mistyped numeric key, is reported on exactly that key), records (partition
// and offset set, values valid for their schemas, Poll's max respected),
// resumption, and a prompt stop (Poll returns soon after its context is
// cancelled, Close is prompt, no goroutine leaks). Resumption is checked
// the way the worker commits: once records 0..k-1 are acknowledged, the
// latest offset of every source partition among them is stored, and the
// task is restarted; each partition must then continue exactly after its
// committed record (none lost, none repeated; a partition with nothing
// committed starts from its beginning). Partitions are compared one by
// one, so a task may interleave them differently after the restart; with a
// single partition, the records after the restart are records k, k+1, ….
//
// RunSink checks the specification, validation, that the offsets Flush
// reports durable are honest (every record before them can be read back
// from the external system, without Close) and never beyond what was
// delivered, that they progress (Flush, called again without new records,
// reports what it was given within SinkDriver.Timeout: an asynchronous
// sink may lag but not stall), and a prompt Close.
//
// The kit drives connectors through the sdk interfaces in the test process;
// the plugins package's tests run the same connectors through the plugin
// protocol.
package sdktest
