# Tributary build and test entry points. `make test` is the README's test
# command and what CI (.ci/run) runs after installing the prerequisites.

GO ?= go
comma := ,
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Each fuzz target runs this many new inputs, after replaying the corpus it
# built up in earlier runs (Go keeps it in the build cache), so coverage
# grows from run to run. A count, not a duration: a duration can end while a
# slow input runs, which go test reports as a spurious "context deadline
# exceeded" failure. 10000 inputs take 2-10 s per target here; for a long
# session run e.g. `make fuzz FUZZTIME=2000000x`.
FUZZTIME ?= 10000x
# The Go modules of the repository: the product, the SDK connector authors
# import (its own module, required by the product through a replace), and
# the examples built against the SDK as a third party would,
# integration/ferretdb, the FerretDB server the MongoDB tests run, and
# integration/mongocontainer, which starts a MongoDB replica set in Docker
# through testcontainers-go for the live change-stream tests (each its own
# module so that FerretDB, testcontainers-go and the Docker client stay out
# of the product's go.mod; the harness builds them once and caches the
# binaries; mongocontainer's own tests need no Docker and pull no image),
# and integration/container, the tests of the container image and compose
# files against a real Docker engine (testcontainers-go again), and
# integration/console, the web console's tests in headless Chromium
# (chromedp).
MODULES := . sdk examples integration/ferretdb integration/mongocontainer integration/container integration/console

.PHONY: build test check unit fuzz pg17 clean image image-context image-release

# The version stamped into the binary (tributary version) and the image's
# tag and labels: the nearest tag, else the commit.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The image's name (a registry path for a release, e.g. ghcr.io/tributary-dev/tributary).
IMAGE ?= ghcr.io/tributary-dev/tributary
# The architectures image-context stages; `make image` builds this
# machine's, image-release all of PLATFORMS.
ARCHS ?= $(shell $(GO) env GOARCH)
PLATFORMS ?= linux/amd64,linux/arm64
DOCKER ?= docker
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(REVISION)

# Every command under cmd/: tributary (broker, worker, dev, CLI) and,
# beside it, the tributary-connector-* plugins that serve the first-party
# connectors, one per family of libraries (basic, postgres, mongodb, s3):
# Go initialises every linked package in each process, so the drivers,
# aws-sdk-go-v2 and arrow-go stay out of the worker's and broker's
# processes and out of each other's. The release binaries leave out the
# symbol table and DWARF (-s -w); stack traces and profiles keep their
# function names (they come from the pclntab).
build:
	$(GO) build -ldflags='$(LDFLAGS)' -o bin/ ./cmd/...

# The container image's build context, bin/image: the static executables of
# cmd/ per architecture of ARCHS (CGO_ENABLED=0, so the image needs no libc)
# in linux-ARCH/, and the image's few files (docker/passwd and
# docker/group, this machine's CA bundle, an empty /tmp; the data
# directory owned by the image's user).
image-context:
	@test -r $(CA_BUNDLE) || { echo "no CA bundle at $(CA_BUNDLE): apt-get install ca-certificates, or set CA_BUNDLE"; exit 1; }
	rm -rf bin/image && mkdir -p bin/image/rootfs/etc/ssl/certs bin/image/rootfs/tmp bin/image/home/data
	chmod 1777 bin/image/rootfs/tmp
	cp docker/passwd docker/group bin/image/rootfs/etc/
	cp $(CA_BUNDLE) bin/image/rootfs/etc/ssl/certs/ca-certificates.crt
	@set -e; for arch in $(ARCHS); do \
		echo "go build linux/$$arch ./cmd/..."; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags='$(LDFLAGS)' \
			-o bin/image/linux-$$arch/ ./cmd/...; \
	done

# The image for this machine's architecture, tagged $(IMAGE):$(VERSION) and
# $(IMAGE):latest, with the engine's classic builder or BuildKit alike.
image: image-context
	$(DOCKER) build -f docker/Dockerfile --build-arg TARGETARCH=$(firstword $(ARCHS)) \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
		-t $(IMAGE):$(VERSION) -t $(IMAGE):latest bin/image

# A release: linux/amd64 and linux/arm64 in one multi-arch manifest, pushed
# to $(IMAGE) (docker buildx and a registry login needed; see the README).
image-release:
	$(MAKE) image-context ARCHS="$(subst linux/,,$(subst $(comma), ,$(PLATFORMS)))"
	$(DOCKER) buildx build -f docker/Dockerfile --platform $(PLATFORMS) \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
		-t $(IMAGE):$(VERSION) -t $(IMAGE):latest --push bin/image

# Everything CI runs: static checks, all tests (unit, integration with real
# brokers and clients), then each fuzz target briefly.
test: check unit fuzz pg17

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@set -e; for m in $(MODULES); do \
		begin=$$(date +%s); \
		(cd $$m && $(GO) vet ./... && $(STATICCHECK) ./...); \
		echo "vet + staticcheck: $$m: $$(( $$(date +%s) - begin )) s"; \
	done

# Integration tests mostly wait on sockets and child processes (brokers,
# JVMs, PostgreSQL, plugins), so they run side by side (t.Parallel) up to
# this many at a time; unit tests with t.Parallel share the limit.
PARALLEL ?= 4
# `go test -json` logs of the last run, one per module, for scripts/slowest.
TESTLOGS ?= $(CURDIR)/.testlogs

# The Postgres suite again on PostgreSQL 17: the harness runs the servers
# in Docker containers of the image integration/container builds from
# Debian trixie's packages (its tests, run by `make unit`, make it); without
# an engine or the image the tests skip, saying so.
PG17_IMAGE ?= tributary-test/postgres:17
pg17:
	cd integration && TRIBUTARY_PG_IMAGE=$(PG17_IMAGE) $(GO) test -count=1 -timeout 30m -parallel $(PARALLEL) -run '^TestPostgres' .

unit:
	@mkdir -p $(TESTLOGS); rm -f $(TESTLOGS)/*.json; status=0; begin=$$(date +%s); \
	for m in $(MODULES); do \
		log=$(TESTLOGS)/$$( [ $$m = . ] && echo root || echo $$m | tr / - ).json; \
		(cd $$m && GO=$(GO) $(CURDIR)/scripts/gotest $$log -count=1 -timeout 30m -parallel $(PARALLEL) ./...) || status=1; \
	done; \
	echo "unit (all modules): $$(( $$(date +%s) - begin )) s"; \
	echo; ./scripts/slowest -n 15 $(TESTLOGS)/*.json; exit $$status

fuzz:
	./scripts/fuzz $(FUZZTIME)

clean:
	rm -rf bin
