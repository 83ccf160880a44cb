package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-dev/tributary/internal/kafkatls"
	"github.com/tributary-dev/tributary/internal/properties"
	"github.com/tributary-dev/tributary/restapi"
	"github.com/tributary-dev/tributary/restapi/kafkarest"
)

// restProxySettings are the REST proxy's settings of tributary broker,
// rest.proxy.*: not the broker's own, so taken out of its properties.
type restProxySettings struct {
	listener        string // host:port; "" not served
	https           bool
	tls             map[string]string // ssl.* of an https listener
	jaasFile        string            // basic authentication's JAAS file; "" none
	instanceTimeout time.Duration
	registryURL     string // of the Avro and JSON Schema formats; "" none
}

// restProxyHTTPSPrefix is where the HTTPS settings of the proxy's listener
// go, as Kafka Connect's listeners.https.ssl.* under the proxy's prefix;
// without any, the broker's own ssl.* settings serve it.
const restProxyHTTPSPrefix = "rest.proxy.listeners.https."

// takeRESTProxySettings removes the REST proxy's settings from props and
// parses them: rest.proxy.listeners (http:// or https://host:port), the
// HTTPS listener's rest.proxy.listeners.https.ssl.* (else the broker's
// ssl.*, which stay), rest.proxy.authentication.jaas.file (basic
// authentication as the REST API's: the KafkaConnect section of that JAAS
// file) and rest.proxy.consumer.instance.timeout.ms.
func takeRESTProxySettings(props properties.Properties) (restProxySettings, error) {
	var s restProxySettings
	if v, ok := props["rest.proxy.listeners"]; ok {
		delete(props, "rest.proxy.listeners")
		if v = strings.TrimSpace(v); v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return s, fmt.Errorf("rest.proxy.listeners %q: must be http://host:port, https://host:port, or empty", v)
			}
			if _, _, err := net.SplitHostPort(u.Host); err != nil {
				return s, fmt.Errorf("rest.proxy.listeners %q: must be http://host:port, https://host:port, or empty", v)
			}
			s.listener, s.https = u.Host, u.Scheme == "https"
		}
	}
	s.tls = map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, restProxyHTTPSPrefix); ok {
			delete(props, k)
			s.tls[rest] = v
		}
	}
	if len(s.tls) == 0 {
		for k, v := range props {
			if strings.HasPrefix(k, "ssl.") {
				s.tls[k] = v // the broker's; left for it
			}
		}
	}
	if s.https {
		if _, _, err := kafkatls.Server(s.tls); err != nil {
			return s, fmt.Errorf("rest.proxy.listeners https://%s: TLS settings (%s*, else ssl.*): %w", s.listener, restProxyHTTPSPrefix, err)
		}
	}
	if v, ok := props["rest.proxy.authentication.jaas.file"]; ok {
		delete(props, "rest.proxy.authentication.jaas.file")
		s.jaasFile = strings.TrimSpace(v)
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
	scheme := "http"
	if s.https {
		tlsCfg, notes, err := kafkatls.Server(s.tls)
		if err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("REST proxy listener %s: TLS settings: %w", s.listener, err)
		}
		for _, n := range notes {
			logger.Warn(n, "listener", s.listener)
		}
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	var auth *restapi.BasicAuth
	if s.jaasFile != "" {
		if auth, err = restapi.LoadBasicAuth(s.jaasFile, logger); err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("REST proxy: rest.proxy.authentication.jaas.file: %w", err)
		}
	}
	p, err := kafkarest.New(kafkarest.Config{Seeds: seeds, Logger: logger, InstanceTimeout: s.instanceTimeout, SchemaRegistryURL: s.registryURL})
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	var h http.Handler = p.Handler()
	if auth != nil {
		h = auth.Require(h, kafkarest.Realm, logger)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("REST proxy listener failed", "err", err)
		}
	}()
	url = scheme + "://" + dialable(ln.Addr())
	logger.Info("serving the Kafka REST proxy", "url", url, "basic_auth", auth != nil)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		p.Close()
	}, url, nil
}
