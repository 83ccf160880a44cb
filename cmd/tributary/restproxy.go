package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

// restProxySettings are the REST proxy's settings of tributary broker,
// rest.proxy.*: not the broker's own, so taken out of its properties.
type restProxySettings struct {
	listener        string // host:port; "" not served
	instanceTimeout time.Duration
	registryURL     string // of the Avro and JSON Schema formats; "" none
}

// takeRESTProxySettings removes rest.proxy.listeners (http://host:port) and
// rest.proxy.consumer.instance.timeout.ms from props and parses them.
func takeRESTProxySettings(props properties.Properties) (restProxySettings, error) {
	var s restProxySettings
	if v, ok := props["rest.proxy.listeners"]; ok {
		delete(props, "rest.proxy.listeners")
		if v = strings.TrimSpace(v); v != "" {
			u, err := url.Parse(v)
			if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return s, fmt.Errorf("rest.proxy.listeners %q: must be http://host:port, or empty", v)
			}
			if _, _, err := net.SplitHostPort(u.Host); err != nil {
				return s, fmt.Errorf("rest.proxy.listeners %q: must be http://host:port, or empty", v)
			}
			s.listener = u.Host
		}
	}
	if v, ok := props["rest.proxy.consumer.instance.timeout.ms"]; ok {
		delete(props, "rest.proxy.consumer.instance.timeout.ms")
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || ms <= 0 {
			return s, fmt.Errorf("rest.proxy.consumer.instance.timeout.ms %q: must be a positive number of milliseconds", v)
		}
		s.instanceTimeout = time.Duration(ms) * time.Millisecond
	}
	if v, ok := props["rest.proxy.schema.registry.url"]; ok {
		delete(props, "rest.proxy.schema.registry.url")
		s.registryURL = strings.TrimSpace(v)
	}
	return s, nil
}

// startRESTProxy serves Confluent's REST Proxy API on s.listener over the
// Kafka at seeds until the returned stop is called; url is where.
func startRESTProxy(s restProxySettings, seeds []string, logger *slog.Logger) (stop func(), url string, err error) {
	ln, err := net.Listen("tcp", s.listener)
	if err != nil {
		return nil, "", fmt.Errorf("REST proxy listener %s: %w", s.listener, err)
	}
	p, err := kafkarest.New(kafkarest.Config{Seeds: seeds, Logger: logger, InstanceTimeout: s.instanceTimeout, SchemaRegistryURL: s.registryURL})
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("REST proxy listener failed", "err", err)
		}
	}()
	url = "http://" + dialable(ln.Addr())
	logger.Info("serving the Kafka REST proxy", "url", url)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		p.Close()
	}, url, nil
}
