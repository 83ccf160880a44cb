package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/internal/redact"
)

func mirrorCommand() command {
	return command{name: "mirror", summary: "MirrorMaker 2's dedicated mode: mirror Kafka clusters from an mm2.properties", run: runMirror}
}

const mirrorHelp = `Usage: tributary mirror [--clusters A,B] mm2.properties

Runs MirrorMaker 2 from the same mm2.properties as Kafka's
connect-mirror-maker.sh: for every enabled flow A->B it runs a worker on
cluster B (group A-mm2, internal topics mm2-configs.A.internal,
mm2-offsets.A.internal and mm2-status.A.internal, as Kafka's driver names
them) with the MirrorSourceConnector, MirrorCheckpointConnector and
MirrorHeartbeatConnector of the flow.

Keys (Kafka's):
  clusters=A, B                  the cluster aliases
  A.bootstrap.servers=…          each cluster's client settings (A.security.protocol,
                                 A.ssl.*, A.sasl.*; A.consumer.*, A.producer.*, A.admin.*)
  A->B.enabled=true              a flow (default false)
  A->B.<key>=…                   a connector setting of that flow only
  <key>=…                        a connector setting of every flow (topics, groups,
                                 replication.factor, sync.group.offsets.enabled, …)

Flags:
  --clusters A,B   only run the flows whose target is one of these clusters
  -h, --help       show this help

SIGINT or SIGTERM stops every flow cleanly.
`

// mm2Flow is one enabled source->target flow of an mm2.properties.
type mm2Flow struct {
	Source, Target string
	// Worker is the flow's worker properties; Connectors its three
	// connector configs by name.
	Worker     map[string]string
	Connectors map[string]map[string]string
}

// mm2Flows reads an mm2.properties as Kafka's MirrorMakerConfig does.
func mm2Flows(p properties.Properties, only []string) ([]mm2Flow, error) {
	clusters := splitList(p["clusters"])
	if len(clusters) == 0 {
		return nil, fmt.Errorf("clusters is not set (e.g. clusters=A, B)")
	}
	isCluster := func(k string) bool {
		for _, c := range clusters {
			if strings.HasPrefix(k, c+".") || strings.HasPrefix(k, c+"->") {
				return true
			}
		}
		return false
	}
	// Keys of the driver and of the workers, not of the connectors.
	driverKeys := map[string]bool{"clusters": true, "dedicated.mode.enable.internal.rest": true, "listeners": true}
	for _, c := range clusters {
		if p[c+".bootstrap.servers"] == "" {
			return nil, fmt.Errorf("%s.bootstrap.servers is not set", c)
		}
	}
	var flows []mm2Flow
	for _, src := range clusters {
		for _, tgt := range clusters {
			if src == tgt || !strings.EqualFold(strings.TrimSpace(p[src+"->"+tgt+".enabled"]), "true") {
				continue
			}
			if len(only) > 0 && !slices.Contains(only, tgt) {
				continue
			}
			base := map[string]string{}
			for k, v := range p {
				if !driverKeys[k] && !isCluster(k) && !strings.HasPrefix(k, "config.providers") {
					base[k] = v
				}
			}
			for k, v := range p {
				if rest, ok := strings.CutPrefix(k, src+"->"+tgt+"."); ok && rest != "enabled" {
					base[rest] = v
				}
			}
			for side, alias := range map[string]string{"source": src, "target": tgt} {
				for k, v := range p {
					rest, ok := strings.CutPrefix(k, alias+".")
					if !ok {
						continue
					}
					base[side+".cluster."+rest] = v
					for _, role := range []string{"consumer.", "producer.", "admin."} {
						if r, ok := strings.CutPrefix(rest, role); ok {
							base[side+"."+role+r] = v
						}
					}
				}
			}
			base["source.cluster.alias"], base["target.cluster.alias"] = src, tgt
			base["key.converter"] = "org.apache.kafka.connect.converters.ByteArrayConverter"
			base["value.converter"] = base["key.converter"]
			base["header.converter"] = base["key.converter"]
			conns := map[string]map[string]string{}
			for _, name := range []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"} {
				c := map[string]string{}
				for k, v := range base {
					c[k] = v
				}
				c["connector.class"] = "org.apache.kafka.connect.mirror." + name
				conns[name] = c
			}
			// The worker: on the target, Kafka's names for a dedicated
			// flow's group and internal topics.
			w := map[string]string{}
			for k, v := range p {
				if rest, ok := strings.CutPrefix(k, tgt+"."); ok {
					w[rest] = v
				}
			}
			for _, k := range []string{"config.storage.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
				"offset.flush.interval.ms", "tasks.max"} {
				if v, ok := p[k]; ok {
					w[k] = v
				}
			}
			w["group.id"] = src + "-mm2"
			w["config.storage.topic"] = "mm2-configs." + src + ".internal"
			w["offset.storage.topic"] = "mm2-offsets." + src + ".internal"
			w["status.storage.topic"] = "mm2-status." + src + ".internal"
			w["client.id"] = src + "->" + tgt
			w["key.converter"] = base["key.converter"]
			w["value.converter"] = base["key.converter"]
			w["header.converter"] = base["key.converter"]
			w["listeners"] = "http://127.0.0.1:0"
			flows = append(flows, mm2Flow{Source: src, Target: tgt, Worker: w, Connectors: conns})
		}
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("no flow is enabled: set A->B.enabled=true for some clusters A and B of %v", clusters)
	}
	return flows, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func runMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mirror", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	clusters := fs.String("clusters", "", "")
	level := fs.String("log-level", "info", "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, mirrorHelp)
			return 0
		}
		fmt.Fprintf(stderr, "tributary mirror: %v (see --help)\n", err)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "tributary mirror: give one mm2.properties file (see --help)")
		return 2
	}
	props, err := properties.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "tributary mirror: %v\n", err)
		return 2
	}
	flows, err := mm2Flows(props, splitList(*clusters))
	if err != nil {
		fmt.Fprintf(stderr, "tributary mirror: %s: %v\n", fs.Arg(0), err)
		return 2
	}
	secrets := &redact.Set{}
	logger, loggers, err := newLevelLogger(stderr, *level, secrets)
	if err != nil {
		fmt.Fprintf(stderr, "tributary mirror: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var running []*runningWorker
	for _, f := range flows {
		cfg, warnings, err := loadWorkerConfig(properties.Properties(f.Worker), os.Environ())
		if err != nil {
			fmt.Fprintf(stderr, "tributary mirror: flow %s->%s: %v\n", f.Source, f.Target, err)
			return 2
		}
		for _, w := range warnings {
			logger.Warn(w, "flow", f.Source+"->"+f.Target)
		}
		rw, err := startWorker(ctx, cfg, logger.With("flow", f.Source+"->"+f.Target), loggers, secrets, newRegistry(), "")
		if err != nil {
			fmt.Fprintf(stderr, "tributary mirror: flow %s->%s: %v\n", f.Source, f.Target, err)
			return 1
		}
		running = append(running, rw)
		go func(f mm2Flow, url string) {
			if err := putConnectors(ctx, url, f.Connectors); err != nil && ctx.Err() == nil {
				logger.Error("could not configure the flow's connectors", "flow", f.Source+"->"+f.Target, "error", err)
				cancel()
			}
			logger.Info("mirroring", "flow", f.Source+"->"+f.Target, "worker", url)
		}(f, rw.url)
	}
	code := 0
	for _, rw := range running {
		if err := <-rw.done; err != nil {
			logger.Error("flow failed", "error", err)
			code = 1
		}
	}
	return code
}

// putConnectors writes the flow's connector configs through its worker's
// REST API (as Kafka's MirrorHerder does on its leader), retrying until
// the worker has joined its group.
func putConnectors(ctx context.Context, url string, conns map[string]map[string]string) error {
	client := &http.Client{Timeout: 100 * time.Second}
	for _, name := range []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"} {
		body, _ := json.Marshal(conns[name])
		for {
			req, _ := http.NewRequestWithContext(ctx, "PUT", url+"/connectors/"+name+"/config", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err == nil {
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode < 300 {
					break
				}
				if resp.StatusCode == 400 {
					return fmt.Errorf("%s: %s", name, msg)
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}
