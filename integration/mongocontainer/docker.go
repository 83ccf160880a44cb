package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcmongo "github.com/testcontainers/testcontainers-go/modules/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// engineCheckTimeout bounds the check that a Docker engine answers.
const engineCheckTimeout = 15 * time.Second

// dockerStarter starts the replica set in Docker through testcontainers-go.
type dockerStarter struct{}

func (dockerStarter) start(ctx context.Context, o settings, logw io.Writer) (replicaSet, error) {
	logger := log.New(logw, "testcontainers: ", log.LstdFlags)
	if err := checkEngine(ctx, logger); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "mongocontainer: starting %s (replica set %s); the first run pulls the image\n", o.image, o.replicaSet)
	c, err := tcmongo.Run(ctx, o.image, tcmongo.WithReplicaSet(o.replicaSet), testcontainers.WithLogger(logger))
	if err != nil {
		err = fmt.Errorf("start %s with replica set %s: %w", o.image, o.replicaSet, err)
		if c != nil {
			err = errors.Join(err, removeNow(&dockerReplicaSet{c: c}))
		}
		return nil, err
	}
	rs := &dockerReplicaSet{c: c}
	if rs.u, err = directURI(ctx, c); err == nil {
		err = waitChangeStreams(ctx, rs.u)
	}
	if err != nil {
		return nil, errors.Join(err, removeNow(rs))
	}
	fmt.Fprintf(logw, "mongocontainer: container %s ready at %s\n", c.GetContainerID(), rs.u)
	return rs, nil
}

// checkEngine fails within seconds when no Docker engine answers, rather
// than in the middle of a container's start. A DOCKER_HOST that is set must
// answer itself: testcontainers would otherwise go on to other places
// (/var/run/docker.sock first) and could start the container on an engine
// other than the one named. (Only ~/.testcontainers.properties' tc.host
// comes before DOCKER_HOST for testcontainers.)
func checkEngine(ctx context.Context, logger *log.Logger) (err error) {
	ctx, cancel := context.WithTimeout(ctx, engineCheckTimeout)
	defer cancel()
	where := "DOCKER_HOST is unset, so testcontainers looked in its usual places (/var/run/docker.sock, ~/.testcontainers.properties, the rootless sockets)"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		where = "DOCKER_HOST=" + h
		if err := dockerHostInfo(ctx); err != nil {
			return fmt.Errorf("no Docker engine answers at %s: %w; start Docker or correct DOCKER_HOST", where, err)
		}
	}
	defer func() {
		// testcontainers panics in a few places when it finds no engine.
		if r := recover(); r != nil {
			err = fmt.Errorf("no Docker engine answers (%s): %v; start Docker or point DOCKER_HOST at it", where, r)
		}
	}()
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger))
	if err == nil {
		err = p.Health(ctx) // closes p
	}
	if err != nil {
		return fmt.Errorf("no Docker engine answers (%s): %w; start Docker or point DOCKER_HOST at it", where, err)
	}
	return nil
}

// dockerHostInfo asks the engine DOCKER_HOST (and DOCKER_TLS_VERIFY,
// DOCKER_CERT_PATH) name for its description, as testcontainers does to
// accept an engine.
func dockerHostInfo(ctx context.Context) error {
	cl, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.Info(ctx, client.InfoOptions{})
	return err
}

// directURI is the URI of the container's published port that connects to
// the member directly, whatever the address the replica set knows it by.
func directURI(ctx context.Context, c *tcmongo.MongoDBContainer) (string, error) {
	s, err := c.ConnectionString(ctx)
	if err != nil {
		return "", fmt.Errorf("the container's connection string: %w", err)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("the container's connection string %q: %w", s, err)
	}
	q := u.Query()
	q.Del("replicaSet")
	q.Set("directConnection", "true")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// waitChangeStreams waits until the member is the writable primary of its
// replica set and a change stream opens on it.
func waitChangeStreams(ctx context.Context, uri string) error {
	cl, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", uri, err)
	}
	defer cl.Disconnect(context.Background())
	var last error
	for {
		last = tryChangeStream(ctx, cl)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the replica set at %s did not accept change streams: %w (last: %v)", uri, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func tryChangeStream(ctx context.Context, cl *mongo.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var hello struct {
		IsWritablePrimary bool   `bson:"isWritablePrimary"`
		SetName           string `bson:"setName"`
	}
	if err := cl.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if hello.SetName == "" || !hello.IsWritablePrimary {
		return fmt.Errorf("not yet the primary of a replica set (setName %q, isWritablePrimary %v)", hello.SetName, hello.IsWritablePrimary)
	}
	cs, err := cl.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		return fmt.Errorf("open a change stream: %w", err)
	}
	return cs.Close(ctx)
}

// dockerReplicaSet is the running container.
type dockerReplicaSet struct {
	c *tcmongo.MongoDBContainer
	u string
}

func (r *dockerReplicaSet) uri() string { return r.u }

func (r *dockerReplicaSet) remove(ctx context.Context) error {
	return testcontainers.TerminateContainer(r.c, testcontainers.StopContext(ctx))
}
