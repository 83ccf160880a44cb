package kafkarest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/worker/convert/sr"
)

// Realm is the realm the proxy's 401 answer names in its basic
// authentication challenge: the authentication.realm Confluent's
// documentation gives its REST Proxy (with a JAAS section of that name).
const Realm = "KafkaRest"

// registryLatestTTL is how long the proxy keeps a subject's latest schema
// for v3 records that name none (or only a subject): a stream of such
// records asks the registry once, and a new version registered elsewhere
// is used within this time (at once when the proxy registers it itself,
// from a record's inline schema). Confluent's REST Proxy gets the same
// from its CachedSchemaRegistryClient's latest.cache.ttl.sec, whose
// default (SchemaRegistryClientConfig.LATEST_CACHE_TTL_DEFAULT) is 60s.
const registryLatestTTL = 60 * time.Second

// Config configures a Proxy.
type Config struct {
	// Seeds are the Kafka bootstrap addresses (host:port).
	Seeds []string
	// ClientOpts are extra franz-go options for every client the proxy
	// makes (TLS, SASL, …).
	ClientOpts []kgo.Opt
	// Logger may be nil.
	Logger *slog.Logger
	// InstanceTimeout is consumer.instance.timeout.ms: a consumer instance
	// not used for this long is closed (default 5 minutes).
	InstanceTimeout time.Duration
	// MaxBodyBytes bounds a request body that is read whole (v2 produce
	// and the consumer bodies; default 64 MiB). The v3 streaming produce is
	// bounded per record instead.
	MaxBodyBytes int64
	// SchemaRegistryURL is the schema registry of the Avro, Protobuf and
	// JSON Schema formats (http(s)://host:port); empty: those formats
	// answer 42206.
	SchemaRegistryURL string
}

// Proxy serves Confluent REST Proxy's API over one Kafka cluster.
type Proxy struct {
	cfg    Config
	log    *slog.Logger
	prod   *kgo.Client // default partitioner
	manual *kgo.Client // partition given by the request
	admin  *kadm.Client
	adminc *kgo.Client

	metaMu    sync.Mutex
	meta      map[string]topicMeta // partition counts of existing topics
	cluster   kadm.Metadata        // the cluster's id and brokers, as of clusterAt
	clusterAt time.Time

	consumers *consumers

	sr       *sr.Client // nil: no registry
	schemaMu sync.Mutex
	schemas  map[int]*parsedSchema // by registry id
	inline   map[inlineKey]*parsedSchema

	stop chan struct{}
	done chan struct{}
}

// topicMeta is a cached partition count.
type topicMeta struct {
	partitions int
	at         time.Time
}

// New connects the proxy's clients (lazily: no broker needs to be up).
func New(cfg Config) (*Proxy, error) {
	if len(cfg.Seeds) == 0 {
		return nil, errors.New("kafkarest: no seed brokers")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.InstanceTimeout <= 0 {
		cfg.InstanceTimeout = 5 * time.Minute
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 20
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(cfg.Seeds...)}, cfg.ClientOpts...)
	prodOpts := append(base,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(1<<16),
		kgo.ProducerLinger(2*time.Millisecond),
	)
	p := &Proxy{cfg: cfg, log: cfg.Logger, meta: map[string]topicMeta{}, stop: make(chan struct{}), done: make(chan struct{})}
	var err error
	if cfg.SchemaRegistryURL != "" {
		if p.sr, err = sr.New(sr.Config{URLs: []string{cfg.SchemaRegistryURL}, Logger: cfg.Logger, LatestTTL: registryLatestTTL}); err != nil {
			return nil, fmt.Errorf("kafkarest: %w", err)
		}
		p.schemas = map[int]*parsedSchema{}
		p.inline = map[inlineKey]*parsedSchema{}
	}
	if p.prod, err = kgo.NewClient(prodOpts...); err != nil {
		return nil, fmt.Errorf("kafkarest: producer: %w", err)
	}
	if p.manual, err = kgo.NewClient(append(prodOpts, kgo.RecordPartitioner(kgo.ManualPartitioner()))...); err != nil {
		p.prod.Close()
		return nil, fmt.Errorf("kafkarest: producer: %w", err)
	}
	if p.adminc, err = kgo.NewClient(base...); err != nil {
		p.prod.Close()
		p.manual.Close()
		return nil, fmt.Errorf("kafkarest: admin client: %w", err)
	}
	p.admin = kadm.NewClient(p.adminc)
	p.consumers = newConsumers(p)
	go p.reap()
	return p, nil
}

// Close closes every consumer instance and the clients.
func (p *Proxy) Close() {
	close(p.stop)
	<-p.done
	p.consumers.closeAll()
	p.prod.Close()
	p.manual.Close()
	p.adminc.Close()
}

// reap closes expired consumer instances every second.
func (p *Proxy) reap() {
	defer close(p.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.consumers.expire(now)
		}
	}
}

// Handler is the REST API.
func (p *Proxy) Handler() http.Handler {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, "application/json", errorf(http.StatusNotFound, http.StatusNotFound, "HTTP 404 Not Found"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, "application/json", errorf(http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed"))
	})
	p.routesV2(r)
	p.routesV3(r)
	return r
}

// readBody reads a whole request body up to the configured bound.
func (p *Proxy) readBody(r *http.Request) ([]byte, *Error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, p.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, badRequest("reading the body: %v", err)
	}
	if int64(len(b)) > p.cfg.MaxBodyBytes {
		return nil, errorf(http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", p.cfg.MaxBodyBytes)
	}
	return b, nil
}

// partitionCount is the number of partitions of topic, from a cache of at
// most a few seconds; errTopicNotFound when it does not exist.
func (p *Proxy) partitionCount(ctx context.Context, topic string) (int, error) {
	p.metaMu.Lock()
	m, ok := p.meta[topic]
	p.metaMu.Unlock()
	if ok && time.Since(m.at) < 5*time.Second {
		return m.partitions, nil
	}
	td, err := p.admin.ListTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	d, ok := td[topic]
	if !ok || d.Err != nil || len(d.Partitions) == 0 {
		if ok && d.Err != nil && !isUnknownTopic(d.Err) {
			return 0, d.Err
		}
		return 0, errTopicNotFound
	}
	p.metaMu.Lock()
	p.meta[topic] = topicMeta{partitions: len(d.Partitions), at: time.Now()}
	p.metaMu.Unlock()
	return len(d.Partitions), nil
}

// autoCreate asks the cluster for topic's metadata allowing it to be
// created, as a Kafka producer's metadata request does: a broker with
// auto.create.topics.enable creates it.
func (p *Proxy) autoCreate(ctx context.Context, topic string) error {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	req.AllowAutoTopicCreation = true
	_, err := req.RequestWith(ctx, p.adminc)
	return err
}

// produceTarget is partitionCount for a v2 produce: an unknown topic is
// auto-created when the cluster allows it.
func (p *Proxy) produceTarget(ctx context.Context, topic string) (int, error) {
	n, err := p.partitionCount(ctx, topic)
	if !errors.Is(err, errTopicNotFound) {
		return n, err
	}
	if err := p.autoCreate(ctx, topic); err != nil {
		return 0, err
	}
	for range 20 {
		if n, err = p.partitionCount(ctx, topic); !errors.Is(err, errTopicNotFound) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return n, err
}

// forgetTopic drops topic from the partition cache (deleted, grown).
func (p *Proxy) forgetTopic(topic string) {
	p.metaMu.Lock()
	delete(p.meta, topic)
	p.metaMu.Unlock()
}

// pathPartition parses the {partition} path parameter.
func pathPartition(r *http.Request) (int32, *Error) {
	s := chi.URLParam(r, "partition")
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, notFound(codePartitionNotFound, msgPartitionNotFound)
	}
	return int32(n), nil
}
