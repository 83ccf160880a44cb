package kafkarest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"syscall"
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

// v3BenchBody is a stream of 1,000 v3 produce records as a client streams
// them: a STRING key, a JSON value with integers, fractions, exponents,
// strings with escapes, literals and nested arrays and objects.
func v3BenchBody() []byte {
	var buf bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&buf, `{"partition_id":%d,"headers":[{"name":"trace","value":"dHJhY2U="}],`+
			`"key":{"type":"STRING","data":"order-%d"},`+
			`"value":{"type":"JSON","data":{"id":%d,"price":%d.25,"score":-%d.5e-3,"ratio":1E+%d,`+
			`"name":"customer \"%d\"\n","ok":true,"gone":null,"tags":["a","b\u00e9"],"lines":[{"sku":%d,"qty":2,"w":0.125}]}}}`+"\n",
			i%3, i, i, i, i, i%9, i, i)
	}
	return buf.Bytes()
}

// BenchmarkV3Stream reads a streamed v3 produce body: cut into values
// (read=values: the splitter, against encoding/json's Decoder into
// json.RawMessage), and into records (read=records: the splitter and
// decodeV3Fast, against the Decoder into v3Produce, the reference they
// must agree with).
func BenchmarkV3Stream(b *testing.B) {
	body := v3BenchBody()
	const records = 1000
	run := func(b *testing.B, read func() int) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		cpu0 := processCPU()
		for b.Loop() {
			if n := read(); n != records {
				b.Fatalf("read %d records, want %d", n, records)
			}
		}
		cpu := processCPU() - cpu0
		b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
		// The process's CPU time, which a busy machine's other work does
		// not stretch as it stretches the wall clock's.
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(records*b.N), "cpu-ns/record")
	}
	fast := func(decode bool) func() int {
		return func() int {
			sp := newSplitter(bytes.NewReader(body))
			n := 0
			for {
				raw, err := sp.next()
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					b.Fatal(err)
				}
				if decode {
					if _, err := decodeV3Fast(raw); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
		}
	}
	reference := func(into func() any) func() int {
		return func() int {
			dec := json.NewDecoder(bytes.NewReader(body))
			n := 0
			for {
				err := dec.Decode(into())
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	b.Run("read=values/impl=splitter", func(b *testing.B) { run(b, fast(false)) })
	b.Run("read=values/impl=encoding_json", func(b *testing.B) {
		run(b, reference(func() any { return new(json.RawMessage) }))
	})
	b.Run("read=records/impl=fast", func(b *testing.B) { run(b, fast(true)) })
	b.Run("read=records/impl=encoding_json", func(b *testing.B) {
		run(b, reference(func() any { return new(v3Produce) }))
	})
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
