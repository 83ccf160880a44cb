package broker

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
	"github.com/tributary-dev/tributary/internal/properties"
)

// BenchmarkListener measures one connection's request path on each kind of
// listener: Produce (acks=1, so no fsync is waited for) of a 256 KiB batch
// of 1 KiB records, and Fetch of 1 MiB of stored batches. SASL_SSL
// authenticates once (PLAIN) and then costs what SSL costs; acls=on adds
// the StandardAuthorizer's checks against 200 bindings. The client's own
// encryption is in the figures, as in any loopback run.
//
//	go test ./broker -run '^$' -bench BenchmarkListener -benchtime 400x
func BenchmarkListener(b *testing.B) {
	for _, l := range []struct{ name, protocol string }{
		{"PLAINTEXT", "PLAINTEXT"}, {"SSL", "SSL"}, {"SASL_SSL", "SASL_SSL"}, {"SASL_SSL/acls=on", "SASL_SSL"},
	} {
		for _, api := range []string{"produce", "fetch"} {
			b.Run("listener="+l.name+"/api="+api, func(b *testing.B) {
				benchListener(b, l.protocol, strings.HasSuffix(l.name, "acls=on"), api)
			})
		}
	}
}

const benchTopic = "bench-topic"

func benchListener(b *testing.B, protocol string, acls bool, api string) {
	dir := b.TempDir()
	ca, _, sslProps := testPKI(b, dir)
	p := properties.Properties{
		"listeners":                      "CLIENT://127.0.0.1:0",
		"listener.security.protocol.map": "CLIENT:" + protocol,
	}
	if protocol != "PLAINTEXT" {
		for k, v := range sslProps {
			p[k] = v
		}
	}
	if strings.HasPrefix(protocol, "SASL") {
		p["sasl.enabled.mechanisms"] = "PLAIN"
		p["listener.name.client.plain.sasl.jaas.config"] = plainJAAS
	}
	if acls {
		p["authorizer.class.name"] = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
		p["super.users"] = "User:admin"
	}
	brk := startBroker(b, dir, func(c *Config) {
		cfg, _, err := FromProperties(p)
		if err != nil {
			b.Fatal(err)
		}
		cfg.LogDir, cfg.Logger, cfg.Metrics = c.LogDir, c.Logger, nil
		*c = cfg
	})
	if _, err := brk.createTopic(benchTopic, 1, nil); err != nil {
		b.Fatal(err)
	}
	if acls {
		// alice may write and read bench-*, among the bindings of 99 other users.
		var bindings []acl.Binding
		for i := range 100 {
			who := fmt.Sprintf("User:other-%d", i)
			if i == 99 {
				who = "User:alice"
			}
			for _, op := range []acl.Operation{acl.OpWrite, acl.OpRead} {
				bindings = append(bindings, acl.Binding{ResourceType: acl.ResourceTopic, ResourceName: "bench-", PatternType: acl.PatternPrefixed,
					Principal: who, Host: acl.WildcardHost, Operation: op, Permission: acl.PermissionAllow})
			}
		}
		if err := brk.sec.addACLs(bindings); err != nil {
			b.Fatal(err)
		}
	}

	nc, err := net.DialTimeout("tcp", brk.Addr(), 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	if protocol != "PLAINTEXT" {
		nc = tls.Client(nc, &tls.Config{RootCAs: ca, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	}
	c := &rawClient{t: b, nc: nc}
	b.Cleanup(func() { nc.Close() })
	corr := int32(0)
	call := func(req kmsg.Request) kmsg.Response {
		corr++
		c.write(frameRequest(req, corr))
		got, body, err := c.readFrame()
		if err != nil || got != corr {
			b.Fatalf("%s: correlation %d (want %d): %v", kmsg.NameForKey(req.Key()), got, corr, err)
		}
		return decodeResponse(b, req.Key(), req.GetVersion(), body)
	}
	if strings.HasPrefix(protocol, "SASL") {
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		if r := call(hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
			b.Fatalf("SaslHandshake: error %d", r.ErrorCode)
		}
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version, auth.SASLAuthBytes = 2, []byte("\x00alice\x00alice-secret")
		if r := call(auth).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
			b.Fatalf("SaslAuthenticate: error %d", r.ErrorCode)
		}
	}

	values := make([]string, 256) // 1 KiB records (key "k-"+value)
	for i := range values {
		values[i] = strings.Repeat(string(rune('a'+i%26)), 500)
	}
	batch := testBatch(-1, -1, -1, time.Now().UnixMilli(), values...)
	produce := func() {
		req := produceRequest(9, 1, benchTopic, 0, batch)
		r := call(req).(*kmsg.ProduceResponse)
		if code := r.Topics[0].Partitions[0].ErrorCode; code != 0 {
			b.Fatalf("produce: error %d", code)
		}
	}
	if api == "produce" {
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		b.ResetTimer()
		cpu := processCPU()
		for b.Loop() {
			produce()
		}
		reportCPU(b, cpu)
		return
	}
	for range 4 {
		produce()
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = 12, 5000, int32(4*len(batch)), 8<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = benchTopic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 8 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	var n int64
	for _, t := range call(fetch).(*kmsg.FetchResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
				b.Fatalf("fetch: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
			}
			n += int64(len(p.RecordBatches))
		}
	}
	// The loop reads the responses without decoding them: the client's
	// parsing is not what is measured.
	b.SetBytes(n)
	b.ReportAllocs()
	frame := frameRequest(fetch, 0)
	var buf []byte
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		c.write(frame)
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			b.Fatal(err)
		}
		buf = slices.Grow(buf[:0], int(binary.BigEndian.Uint32(size[:])))[:binary.BigEndian.Uint32(size[:])]
		if _, err := io.ReadFull(nc, buf); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// processCPU is the user and system CPU time of the test process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per operation since start
// (broker and client together): on a shared machine it varies less than
// ns/op, which counts the time other processes held the cores.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
