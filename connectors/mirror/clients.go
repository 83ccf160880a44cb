package mirror

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/internal/kafkaauth"
)

// clientOpts translates Kafka client properties (bootstrap.servers, the
// security settings, and the few that change a mirror's behaviour) into
// franz-go options. Properties without a franz-go equivalent are ignored:
// they tune Java's client.
func clientOpts(props map[string]string) ([]kgo.Opt, error) {
	servers := SplitList(props["bootstrap.servers"])
	if len(servers) == 0 {
		return nil, fmt.Errorf("bootstrap.servers is not set")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(servers...)}
	ms := func(k string) (time.Duration, bool, error) {
		v, ok := props[k]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s=%q: not a non-negative number of milliseconds", k, v)
		}
		return time.Duration(n) * time.Millisecond, true, nil
	}
	if id := props["client.id"]; id != "" {
		opts = append(opts, kgo.ClientID(id))
	}
	switch v := props["isolation.level"]; v {
	case "", "read_uncommitted":
	case "read_committed":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	default:
		return nil, fmt.Errorf("isolation.level=%q: must be read_committed or read_uncommitted", v)
	}
	for k, set := range map[string]func(time.Duration) kgo.Opt{
		"request.timeout.ms":  kgo.RequestTimeoutOverhead,
		"metadata.max.age.ms": kgo.MetadataMaxAge,
		"fetch.max.wait.ms":   func(d time.Duration) kgo.Opt { return kgo.FetchMaxWait(d) },
		"linger.ms":           func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) },
	} {
		d, ok, err := ms(k)
		if err != nil {
			return nil, err
		}
		if ok {
			opts = append(opts, set(d))
		}
	}
	for k, set := range map[string]func(int32) kgo.Opt{
		"fetch.max.bytes":           func(n int32) kgo.Opt { return kgo.FetchMaxBytes(n) },
		"max.partition.fetch.bytes": func(n int32) kgo.Opt { return kgo.FetchMaxPartitionBytes(n) },
		"batch.size":                func(n int32) kgo.Opt { return kgo.ProducerBatchMaxBytes(n) },
	} {
		if v, ok := props[k]; ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%s=%q: not a positive integer", k, v)
			}
			opts = append(opts, set(int32(n)))
		}
	}
	sec := map[string]string{}
	for k, v := range props {
		if kafkaauth.IsSecurityKey(k) {
			sec[k] = v
		}
	}
	s, err := kafkaauth.New(sec, kafkaauth.Options{Environ: os.Environ()})
	if err != nil {
		return nil, err
	}
	if s.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(s.TLS))
	}
	if s.Mechanism != nil {
		opts = append(opts, kgo.SASL(s.Mechanism))
	}
	return opts, nil
}

// clients are the franz-go clients of a connector or task.
type clients struct {
	cfg  *CommonConfig
	raw  map[string]string
	name string // the connector's name, for client ids
	mu   sync.Mutex
	open []*kgo.Client
}

func (c *clients) client(r Role, tag string, extra ...kgo.Opt) (*kgo.Client, error) {
	props := ClientProps(c.raw, r)
	props["client.id"] = clientID(props, c.cfg, c.name, tag)
	opts, err := clientOpts(props)
	if err != nil {
		return nil, fmt.Errorf("%s cluster %s client: %w", r.Cluster, r.Kind, err)
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("%s cluster %s client: %w", r.Cluster, r.Kind, err)
	}
	c.mu.Lock()
	c.open = append(c.open, cl)
	c.mu.Unlock()
	return cl, nil
}

func (c *clients) admin(cluster, tag string) (*kadm.Client, error) {
	cl, err := c.client(Role{cluster, "admin"}, tag)
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

func (c *clients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.open {
		cl.Close()
	}
	c.open = nil
}
