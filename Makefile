# slipstream: `make run` serves the default config; `make test` runs every test.

GO      ?= go
BIN     ?= bin/slipstream
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Packages that stream, pool or share state run under the race detector too.
RACE_PKGS := ./server/... ./codec/sse/ ./pool/ ./codec/translate/

.PHONY: all build build-pprof run test vet fmt-check unit race e2e-install clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/slipstream

# A build with the -pprof flag (Go's profiling endpoints on a separate
# listener), for finding where CPU and memory go.
build-pprof:
	$(GO) build -tags pprof -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/slipstream

run: build
	./$(BIN) $(ARGS)

test: fmt-check vet unit race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The whole suite, fuzz seeds included (go test runs seed corpora as tests).
unit:
	$(GO) test -count=1 ./...

race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# npm packages for the SDK and CLI end-to-end tests (from e2e/package-lock.json).
e2e-install:
	sh e2e/install.sh

clean:
	rm -rf bin bench/out

include bench/bench.mk
