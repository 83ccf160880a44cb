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
// resumption (a task restarted from the committed offset of record k
// continues with record k+1, exactly), and a prompt stop (Poll returns soon
// after its context is cancelled, Close is prompt, no goroutine leaks).
//
// RunSink checks the specification, validation, that the offsets Flush
// reports durable are honest (every record before them can be read back
// from the external system, without Close) and never beyond what was
// delivered, and a prompt Close.
//
// The kit drives connectors through the sdk interfaces in the test process;
// the plugins package's tests run the same connectors through the plugin
// protocol.
package sdktest
