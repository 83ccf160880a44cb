package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

// streamReport is the part of a v3 delivery report the tests check.
type streamReport struct {
	ErrorCode   int    `json:"error_code"`
	Message     string `json:"message"`
	PartitionID int32  `json:"partition_id"`
	Offset      int64  `json:"offset"`
}

// streamRecord is record i of a streaming test: a JSON value naming i.
func streamRecord(i int, pad string) string {
	return `{"value":{"type":"JSON","data":{"i":` + strconv.Itoa(i) + `,"pad":"` + pad + `"}}}`
}

// clusterID asks the proxy at h for its cluster's id.
func clusterID(t testing.TB, h string) string {
	t.Helper()
	e := curl(t, "GET", h+"/v3/clusters", "", "", "")
	id, _ := jsonField(t, e.body, "data", "0", "cluster_id").(string)
	if id == "" {
		t.Fatalf("no cluster id: %s", e.body)
	}
	return id
}

// checkStreamed reads topic (one partition) back and checks that every
// reported record i is at its reported offset and that no record is there
// twice; it returns how many records the topic has.
func checkStreamed(t *testing.T, bootstrap, topic string, reports []streamReport, atLeast int) int {
	t.Helper()
	ends, err := newAdmin(t, bootstrap).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	n := int(end.Offset)
	if n < atLeast {
		t.Fatalf("topic %s has %d records, want at least the %d reported", topic, n, atLeast)
	}
	recs := consumeRecords(context.Background(), t, bootstrap, topic, n)
	seen := map[int]bool{}
	byOffset := map[int64]int{}
	for _, r := range recs {
		var v struct{ I int }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("offset %d: %s: %v", r.Offset, r.Value, err)
		}
		if seen[v.I] {
			t.Fatalf("record %d is in the topic twice", v.I)
		}
		seen[v.I] = true
		byOffset[r.Offset] = v.I
	}
	for i, rep := range reports {
		if rep.ErrorCode != 200 {
			continue
		}
		if got, ok := byOffset[rep.Offset]; !ok || got != i {
			t.Fatalf("record %d reported at offset %d, the topic has %d (present %v) there", i, rep.Offset, got, ok)
		}
	}
	return n
}

// TestRESTProxyV3Streaming sends 100,000 records in one chunked request:
// 100,000 delivery reports come back, in order, and every record is in
// the topic once.
func TestRESTProxyV3Streaming(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	createTopic(context.Background(), t, b.Bootstrap(), "stream", 1, nil)
	const n = 100_000
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		for i := range n {
			if _, err := bw.WriteString(streamRecord(i, "x")); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	req, err := http.NewRequest("POST", h+"/v3/clusters/"+clusterID(t, h)+"/topics/stream/records", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != -1 {
		t.Fatalf("status %d, length %d; want a streamed 200", resp.StatusCode, resp.ContentLength)
	}
	dec := json.NewDecoder(resp.Body)
	reports := make([]streamReport, 0, n)
	for {
		var rep streamReport
		if err := dec.Decode(&rep); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("after %d reports: %v", len(reports), err)
		}
		if rep.ErrorCode != 200 || rep.Offset != int64(len(reports)) {
			t.Fatalf("report %d: %+v, want 200 at offset %d", len(reports), rep, len(reports))
		}
		reports = append(reports, rep)
	}
	if len(reports) != n {
		t.Fatalf("%d reports, want %d", len(reports), n)
	}
	if got := checkStreamed(t, b.Bootstrap(), "stream", reports, n); got != n {
		t.Fatalf("topic has %d records, want %d", got, n)
	}
}

// rawStream is a streaming produce over a raw connection, so that a test
// can cut it like a killed client.
type rawStream struct {
	conn net.Conn
	resp *http.Response
	dec  *json.Decoder
}

// openRawStream POSTs a chunked request to url and writes records
// streamRecord(0..n-1) in a goroutine (until the connection fails).
func openRawStream(t *testing.T, url string, n int) *rawStream {
	t.Helper()
	host := strings.TrimPrefix(url, "http://")
	host, path, _ := strings.Cut(host, "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", path, host)
	go func() {
		cw := httputil.NewChunkedWriter(conn)
		var batch strings.Builder
		for i := range n {
			batch.WriteString(streamRecord(i, strings.Repeat("p", 100)))
			if i%50 == 49 || i == n-1 {
				if _, err := io.WriteString(cw, batch.String()); err != nil {
					return
				}
				batch.Reset()
			}
		}
		cw.Close()
		io.WriteString(conn, "\r\n")
	}()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return &rawStream{conn: conn, resp: resp, dec: json.NewDecoder(resp.Body)}
}

// read reads reports until max of them or until the stream fails.
func (s *rawStream) read(t *testing.T, reports []streamReport, max int) ([]streamReport, error) {
	for len(reports) < max {
		var rep streamReport
		if err := s.dec.Decode(&rep); err != nil {
			return reports, err
		}
		if rep.ErrorCode != 200 || rep.Offset != int64(len(reports)) {
			t.Fatalf("report %d: %+v", len(reports), rep)
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

// TestRESTProxyV3StreamingClientKilled cuts a streaming produce half-way
// like a killed client: every record reported as delivered is in the
// topic, and none twice.
func TestRESTProxyV3StreamingClientKilled(t *testing.T) {
	t.Parallel()
	b := harness.TributaryBroker(t)
	h := startRESTProxy(t, b.Bootstrap(), kafkarest.Config{})
	createTopic(context.Background(), t, b.Bootstrap(), "cut", 1, nil)
	s := openRawStream(t, h+"/v3/clusters/"+clusterID(t, h)+"/topics/cut/records", 40_000)
	reports, err := s.read(t, nil, 10_000)
	if err != nil {
		t.Fatalf("after %d reports: %v", len(reports), err)
	}
	s.conn.(*net.TCPConn).SetLinger(0) // a reset, as from a killed process
	s.conn.Close()
	time.Sleep(500 * time.Millisecond) // what the proxy had in flight lands (or not)
	got := checkStreamed(t, b.Bootstrap(), "cut", reports, len(reports))
	t.Logf("%d reports read before the cut; the topic has %d records", len(reports), got)
}

// TestRESTProxyV3StreamingBrokerKill9 kills the broker (which serves the
// proxy, rest.proxy.listeners) with SIGKILL during a streaming produce;
// after a restart on the same data every record whose report said 200 is
// in the topic.
func TestRESTProxyV3StreamingBrokerKill9(t *testing.T) {
	t.Parallel()
	bin := harness.BuildTributary(t)
	dir := t.TempDir() + "/data"
	port, rport := harness.FreePort(t), harness.FreePort(t)
	rest := "http://127.0.0.1:" + strconv.Itoa(rport)
	bp := harness.StartBrokerProcess(t, bin, dir, port, "rest.proxy.listeners="+rest)
	createTopic(context.Background(), t, bp.Addr(), "k9", 1, nil)
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; {
		if resp, err := http.Get(rest + "/v3/clusters"); err == nil {
			resp.Body.Close()
			id = clusterID(t, rest)
		} else if time.Now().After(deadline) {
			t.Fatalf("the REST proxy does not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := openRawStream(t, rest+"/v3/clusters/"+id+"/topics/k9/records", 200_000)
	reports, err := s.read(t, nil, 5_000)
	if err != nil {
		t.Fatalf("after %d reports: %v", len(reports), err)
	}
	bp.Kill()
	reports, err = s.read(t, reports, 1<<30) // what was on the wire before the kill
	t.Logf("the stream ended with: %v", err)
	bp = harness.StartBrokerProcess(t, bin, dir, port)
	got := checkStreamed(t, bp.Addr(), "k9", reports, len(reports))
	t.Logf("%d records reported delivered before the kill; %d in the topic after the restart", len(reports), got)
}
