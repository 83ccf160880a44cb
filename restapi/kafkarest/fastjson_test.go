package kafkarest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
	"time"
)

// FuzzDecodeV3Fast checks the streaming path's JSON against encoding/json:
// the splitter cuts a body into the values json.Decoder reads (and fails
// where it fails), and decodeV3Fast decodes each as json.Unmarshal does.
func FuzzDecodeV3Fast(f *testing.F) {
	f.Add([]byte(`{"partition_id":1,"headers":[{"name":"h","value":"dg=="}],"key":{"type":"STRING","data":"k"},"value":{"type":"JSON","data":{"a":[1,2.5e3,-0.1,true,false,null,"\u00e9\n"]}},"timestamp":"2021-02-05T19:14:42Z"}`))
	f.Add([]byte(` {"value":{"type":"BINARY","data":"Y29u"}}
{"VALUE":{"Type":"json","DATA":[]},"value":{"schema_id":3}}	{"key":null} null 5 "x" [1] {"value":{"data":`))
	f.Add([]byte(`{"a\"b":1,"key":{"type":"STRING","data":"\\\"\/\b\f\n\r\t\u12aF"}} {"value":"x"} {"value":{"type":7}}`))
	f.Add([]byte(`{"value":{"data":1e}} {`))
	f.Fuzz(func(t *testing.T, body []byte) {
		done := make(chan struct{})
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("stuck on %q", body))
			}
		}()
		defer close(done)
		dec := json.NewDecoder(bytes.NewReader(body))
		sp := newSplitter(iotest.HalfReader(bytes.NewReader(body)))
		for n := 0; ; n++ {
			var want json.RawMessage
			werr := dec.Decode(&want)
			got, gerr := sp.next()
			if (werr == nil) != (gerr == nil) || errors.Is(werr, io.EOF) != errors.Is(gerr, io.EOF) {
				t.Fatalf("value %d: splitter %q %v, json.Decoder %q %v", n, got, gerr, want, werr)
			}
			if werr != nil {
				return
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("value %d: splitter %q, json.Decoder %q", n, got, want)
			}
			var wreq v3Produce
			uerr := json.Unmarshal(want, &wreq)
			greq, ferr := decodeV3Fast(got)
			if (uerr == nil) != (ferr == nil) {
				t.Fatalf("value %d %s: decodeV3Fast %v, json.Unmarshal %v", n, got, ferr, uerr)
			}
			if uerr == nil && !reflect.DeepEqual(*greq, wreq) {
				t.Fatalf("value %d %s: decodeV3Fast %+v, json.Unmarshal %+v", n, got, *greq, wreq)
			}
		}
	})
}

// TestSplitterSyntaxError: a value of a stream that is not JSON is a
// *streamSyntaxError saying what is wrong and where, which the stream's
// report passes on.
func TestSplitterSyntaxError(t *testing.T) {
	sp := newSplitter(bytes.NewReader([]byte(`{"value":{"schema":"{\\"t\\":1}"}}`)))
	_, err := sp.next()
	var se *streamSyntaxError
	if !errors.As(err, &se) || err.Error() != `invalid character 't' after value at offset 24` {
		t.Fatalf("next = %v", err)
	}
}
