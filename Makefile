# Tributary build and test entry points. `make test` is the README's test
# command and what CI (.ci/run) runs after installing the prerequisites.

GO ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Each fuzz target runs this many inputs (a count, not a duration: a
# duration can end while a slow input runs, which go test reports as a
# spurious "context deadline exceeded" failure).
FUZZTIME ?= 50000x
# The Go modules of the repository: the product, the SDK connector authors
# import (its own module, required by the product through a replace), and
# the examples built against the SDK as a third party would, and
# integration/ferretdb, the FerretDB server the MongoDB tests run (its own
# module so that FerretDB stays out of the product's go.mod; the harness
# builds it once and caches the binary).
MODULES := . sdk examples integration/ferretdb

.PHONY: build test check unit fuzz clean

# The release binary leaves out the symbol table and DWARF (-s -w): 89 MB
# -> 62 MB since the S3 sink (arrow-go, aws-sdk-go-v2); stack traces and
# profiles keep their function names (they come from the pclntab).
build:
	$(GO) build -ldflags='-s -w' -o bin/tributary ./cmd/tributary

# Everything CI runs: static checks, all tests (unit, integration with real
# brokers and clients), then each fuzz target briefly.
test: check unit fuzz

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@set -e; for m in $(MODULES); do \
		echo "vet + staticcheck: $$m"; \
		(cd $$m && $(GO) vet ./... && $(STATICCHECK) ./...); \
	done

unit:
	@set -e; for m in $(MODULES); do \
		(cd $$m && $(GO) test -count=1 -timeout 30m ./...); \
	done

fuzz:
	./scripts/fuzz $(FUZZTIME)

clean:
	rm -rf bin
