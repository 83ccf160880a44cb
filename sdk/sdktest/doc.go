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
// sink may lag but not stall), and a prompt Close. It plays the worker:
// records of every kind in SinkDriver.Supports (STRING values, struct
// values with optional and logical-type fields, tombstones, nil keys,
// headers) go to Put in batches; a Put that fails with an error marked
// sdk.Retriable gets the same batch again after a short back-off (up to 10
// times), any other error fails the check with the kinds of the batch; a
// task's Rewind (Kafka Connect's context.offset()) moves its partition
// back or forward, and the partition's records are delivered again from
// there (none from before the rewind is handed to Put after it), with a
// Flush in between that must not report past the rewound offset; what
// Flush reports of partitions it was not given is ignored and logged, as
// the runtime does. ReadBack must not hold a record more often than it was
// handed to Put (once, with SinkDriver.Idempotent). With SinkDriver.Lose,
// the kit also restarts the task after the external system lost its latest
// records, from the committed offsets: the task must rewind to what the
// external system still holds.
//
// The kit drives connectors through the sdk interfaces in the test process;
// the plugins package's tests run the same connectors through the plugin
// protocol.
package sdktest
