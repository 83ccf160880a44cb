package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tributary-dev/tributary/internal/kafkatls"
	"github.com/tributary-dev/tributary/internal/loglevel"
	"github.com/tributary-dev/tributary/internal/redact"
	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/worker"
)

// runningWorker is a worker with its REST API being served.
type runningWorker struct {
	w    *worker.Worker
	url  string
	done chan error
}

// startWorker binds the REST listeners (listeners, admin.listeners; HTTPS
// ones with their TLS settings), starts the worker and serves its REST API
// (behind basic authentication when rest.extension.classes asks for it).
// The worker stops when ctx is cancelled; done then yields Run's error.
// portFix says how the user picks another REST port.
//
// reg receives the worker's metrics, served with the rest of reg on GET
// /metrics.
func startWorker(ctx context.Context, cfg worker.Config, logger *slog.Logger, loggers *loglevel.Registry, secrets *redact.Set, reg *prometheus.Registry, portFix string) (*runningWorker, error) {
	restLog := loglevel.Named(logger, "dev.tributary.restapi")
	auth, err := restAuth(cfg, os.Environ(), restLog)
	if err != nil {
		return nil, err
	}
	type bound struct {
		ln    net.Listener
		admin restapi.AdminRoutes
		url   string
	}
	var lns []bound
	closeAll := func() {
		for _, b := range lns {
			b.ln.Close()
		}
	}
	listen := func(l worker.RESTListener, admin restapi.AdminRoutes, httpsProps map[string]string, what string) error {
		ln, err := net.Listen("tcp", l.Addr)
		if err != nil {
			return fmt.Errorf("REST listener %s: %w%s", l.URL(), err, portHint(err, portFix))
		}
		if l.Scheme == "https" {
			tlsCfg, notes, err := kafkatls.Server(httpsProps)
			if err != nil {
				ln.Close()
				return fmt.Errorf("HTTPS listener %s (%s): %w", l.URL(), what, err)
			}
			for _, n := range notes {
				restLog.Warn(n, "listener", l.URL())
			}
			ln = tls.NewListener(ln, tlsCfg)
		}
		lns = append(lns, bound{ln: ln, admin: admin, url: l.Scheme + "://" + dialable(ln.Addr())})
		return nil
	}
	regular := restapi.AdminWithAPI
	if cfg.AdminListeners != nil {
		regular = restapi.AdminNone
	}
	for _, l := range cfg.Listeners {
		if err := listen(l, regular, cfg.HTTPS, "listeners.https.*, else ssl.*"); err != nil {
			closeAll()
			return nil, err
		}
	}
	for _, l := range cfg.AdminListeners {
		if err := listen(l, restapi.AdminOnly, cfg.AdminHTTPS, "admin.listeners.https.*, else ssl.*"); err != nil {
			closeAll()
			return nil, err
		}
	}
	// The advertised listener names the worker; the first one of its
	// scheme.
	first := lns[0]
	for _, b := range lns[:len(cfg.Listeners)] {
		if strings.HasPrefix(b.url, cfg.AdvertisedScheme()+"://") {
			first = b
			break
		}
	}
	w, err := worker.New(cfg, worker.Options{Logger: logger, Loggers: loggers, RESTAddr: first.ln.Addr(), Environ: os.Environ(), Secrets: secrets, Metrics: reg})
	if err != nil {
		closeAll()
		return nil, err
	}
	var srvs []*restapi.Server
	for _, b := range lns {
		srv := restapi.NewServer(restapi.New(w.Herder(), restapi.Options{Logger: restLog, Auth: auth, Client: w.RESTClient(), Admin: b.admin, Metrics: metricsHandler(reg)}), restLog)
		srv.Start(b.ln)
		srvs = append(srvs, srv)
		what := "REST API listening"
		if b.admin == restapi.AdminOnly {
			what = "REST admin endpoints listening"
		}
		logger.Info(what, "url", b.url, "worker", w.ID(), "basic_auth", auth != nil)
	}
	rw := &runningWorker{w: w, url: first.url, done: make(chan error, 1)}
	go func() {
		err := w.Run(ctx)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range srvs {
			s.Shutdown(sctx)
		}
		rw.done <- err
	}()
	return rw, nil
}

// restAuth is the REST API's basic authentication when
// rest.extension.classes names Kafka Connect's basic-auth extension: the
// KafkaConnect section of the JAAS file that java.security.auth.login.config
// names (a worker property here; Kafka Connect's users set it as a JVM
// property in KAFKA_OPTS, which is read too). Another extension class is an
// error: it is Java code, which Tributary cannot run, and a worker must not
// start open when its configuration asks for security.
func restAuth(cfg worker.Config, environ []string, logger *slog.Logger) (*restapi.BasicAuth, error) {
	var auth bool
	for _, c := range cfg.RESTExtensions {
		if c != restapi.BasicAuthExtension {
			return nil, fmt.Errorf("rest.extension.classes: %s is a Java REST extension, which Tributary cannot load (it has %s built in)", c, restapi.BasicAuthExtension)
		}
		auth = true
	}
	if !auth {
		return nil, nil
	}
	file := cfg.JAASConfigFile
	if file == "" {
		file = jaasFileFromKafkaOpts(environ)
	}
	if file == "" {
		return nil, errors.New("rest.extension.classes names the basic-auth extension, which reads the KafkaConnect section of a JAAS file: set java.security.auth.login.config=FILE in the worker properties (or -Djava.security.auth.login.config=FILE in KAFKA_OPTS, as for Kafka Connect)")
	}
	return restapi.LoadBasicAuth(file, logger)
}

// jaasFileFromKafkaOpts reads -Djava.security.auth.login.config=FILE from
// the KAFKA_OPTS environment variable, where Kafka Connect's users put it.
func jaasFileFromKafkaOpts(environ []string) string {
	for _, kv := range slices.Backward(environ) {
		v, ok := strings.CutPrefix(kv, "KAFKA_OPTS=")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(v) {
			if file, ok := strings.CutPrefix(f, "-Djava.security.auth.login.config="); ok {
				return strings.Trim(file, `"'`)
			}
		}
		return ""
	}
	return ""
}
