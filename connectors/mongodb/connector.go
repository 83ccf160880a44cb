package mongodb

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-dev/tributary/sdk"
)

// Class is Debezium's MongoDB connector class, which this connector answers
// to (and to MongoDbConnector, MongoDb and MongoDB).
const Class = "io.debezium.connector.mongodb.MongoDbConnector"

// version is the connector's version: the worker's, as for every
// first-party connector (cmd/tributary's TestFirstPartyVersionsMatchWorker).
const version = "4.4.0-tributary"

// Connector returns the MongoDB source connector.
func Connector() sdk.Connector {
	return sdk.SourceConnector[Config]{
		Class:   Class,
		Aliases: []string{"MongoDB"},
		Version: version,
		Doc:     "Captures MongoDB collections as Debezium-compatible change events: a snapshot, then change streams (or, with capture.mode=poll, scans of an increasing field for servers without change streams).",
		NewTask: func(c Config) sdk.SourceTask { return &task{cfg: c} },
		Check:   check,
		// As Debezium's MongoDbConnector (3.3+, DBZ-9177): supported with
		// poll boundaries. Change streams resume exactly after the
		// committed resume token; an interrupted snapshot is taken again,
		// so its documents may come twice.
		ExactlyOnce: func(Config) sdk.ExactlyOnceSupport { return sdk.ExactlyOnceSupported },
	}
}

// newClient connects (lazily) to the server of cfg.
// newClient connects to the server; monitor, when not nil, watches the
// topology (the task's count of primary elections).
func newClient(cfg *Config, monitor *event.ServerMonitor) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(cfg.ConnectionString.Value()).
		SetAppName("tributary").
		SetConnectTimeout(cfg.ConnectTimeout).
		SetServerSelectionTimeout(cfg.SelectionTimeout).
		SetHeartbeatInterval(cfg.HeartbeatFreq)
	if monitor != nil {
		opts.SetServerMonitor(monitor)
	}
	if cfg.User != "" {
		opts.SetAuth(options.Credential{Username: cfg.User, Password: cfg.Password.Value(), AuthSource: cfg.AuthSource, PasswordSet: true})
	}
	if cfg.SSLEnabled || cfg.SSLInvalidHost {
		tc := opts.TLSConfig
		if tc == nil {
			tc = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if cfg.SSLInvalidHost {
			tc.InsecureSkipVerify = true
		}
		opts.SetTLSConfig(tc)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %s", redact(err.Error(), cfg.ConnectionString.Value()))
	}
	return c, nil
}

// check is the live part of validation: the server answers, accepts the
// credentials, and has change streams if the capture mode needs them.
func check(ctx context.Context, cfg Config) error {
	c, err := newClient(&cfg, nil)
	if err != nil {
		return sdk.FieldError{Key: "mongodb.connection.string", Message: err.Error()}
	}
	defer c.Disconnect(context.WithoutCancel(ctx))
	var hello bson.M
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return sdk.FieldError{Key: "mongodb.connection.string", Message: describeConnectError(err, cfg.ConnectionString.Value())}
	}
	// hello needs no authentication: listing the databases proves the
	// credentials (and the right to read).
	if _, err := c.ListDatabaseNames(ctx, bson.D{}); err != nil {
		key := "mongodb.connection.string"
		if cfg.User != "" {
			key = "mongodb.user"
		}
		return sdk.FieldError{Key: key, Message: describeConnectError(err, cfg.ConnectionString.Value())}
	}
	if cfg.changeStreams() && !hasChangeStreams(hello) {
		return sdk.FieldError{Key: "capture.mode", Message: fmt.Sprintf(
			"capture.mode=%s needs change streams, which only replica sets and sharded clusters have; the server at mongodb.connection.string is a standalone server (or a MongoDB-wire server without change streams, such as FerretDB): use capture.mode=poll, or run MongoDB as a (single-node) replica set", cfg.CaptureMode)}
	}
	return nil
}

// hasChangeStreams reports whether a hello reply is from a replica set
// member or a mongos.
func hasChangeStreams(hello bson.M) bool {
	if _, ok := hello["setName"]; ok {
		return true
	}
	return hello["msg"] == "isdbgrid"
}

// describeConnectError turns a driver error into a message that says what
// to check.
func describeConnectError(err error, uri string) string {
	msg := redact(err.Error(), uri)
	var se mongo.ServerError
	switch {
	case isAuthError(err):
		return "authentication failed: " + msg + " (check the user, password and authSource in mongodb.connection.string, or mongodb.user/mongodb.password)"
	case errors.As(err, &se) && se.HasErrorCode(13): // Unauthorized
		return "not authorized: " + msg + " (the user needs the read role on the captured databases and listDatabases)"
	case errors.Is(err, context.DeadlineExceeded) || mongo.IsTimeout(err) || strings.Contains(msg, "server selection"):
		return "cannot reach the server: " + msg + " (check the hosts and ports in mongodb.connection.string, that the server runs, and TLS settings)"
	}
	return "cannot connect: " + msg
}

func isAuthError(err error) bool {
	var se mongo.ServerError
	if errors.As(err, &se) && (se.HasErrorCode(18) || se.HasErrorCode(11)) { // AuthenticationFailed, UserNotFound
		return true
	}
	s := err.Error()
	return strings.Contains(s, "auth error") || strings.Contains(s, "authentication") || strings.Contains(s, "Authentication")
}
