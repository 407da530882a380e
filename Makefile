# slipstream: `make run` serves the default config; `make test` runs every test
# and ends with one line counting them; `make install` puts slipstream in GOBIN.

GO      ?= go
BIN     ?= bin/slipstream
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Packages that stream, pool or share state run under the race detector too.
RACE_PKGS := ./server/... ./codec/sse/ ./pool/ ./codec/translate/ ./chaos/

# The static build the container image uses (Dockerfile runs `make static`).
STATIC_ENV   := CGO_ENABLED=0
STATIC_FLAGS := -trimpath -ldflags "-s -w $(LDFLAGS)"

.PHONY: all build build-pprof static install run test lint vet fmt-check unit race fuzz e2e-install clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/slipstream

# A build with the -pprof flag (Go's profiling endpoints on a separate
# listener), for finding where CPU and memory go.
build-pprof:
	$(GO) build -tags pprof -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/slipstream

# A static binary (no libc, no loader): what the container image ships.
static:
	$(STATIC_ENV) $(GO) build $(STATIC_FLAGS) -o $(BIN) ./cmd/slipstream

# Installs slipstream into GOBIN (default $$(go env GOPATH)/bin).
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/slipstream
	@d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH)/bin; echo "installed $$d/slipstream (add $$d to PATH)"

run: build
	./$(BIN) $(ARGS)

# golangci-lint, pinned: installed from the Go module proxy into bin/ under
# a name that carries the version, so a new pin installs anew. Its rules
# (the package layout among them) are in .golangci.yml.
GOLANGCI_VERSION := v2.15.0
GOLANGCI         := bin/golangci-lint-$(GOLANGCI_VERSION)

$(GOLANGCI):
	@mkdir -p bin
	GOBIN=$(CURDIR)/bin/.golangci $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	@mv bin/.golangci/golangci-lint $@ && rmdir bin/.golangci

lint: $(GOLANGCI)
	$(GOLANGCI) run ./...

# Everything: gofmt, go vet, golangci-lint, the unit run (e2e with the real
# clients, fuzz seeds, chaos) and the race run, counted by internal/testsum
# (a lint finding is one failed check, its findings listed). The last line
# is `tests: N passed, N failed, N skipped`; skip reasons are listed above
# it. The e2e clients are installed from the lockfile first when npm is
# present. SLIPSTREAM_REQUIRE_E2E=1 (set by .ci/run) fails a real-client
# test instead of skipping it.
test: $(GOLANGCI)
	@sh e2e/install.sh || echo "!!! e2e/install.sh failed: the real-client tests will skip (or fail under SLIPSTREAM_REQUIRE_E2E=1)"
	@$(GO) build -o bin/testsum ./internal/testsum
	@bin/testsum -lint $(GOLANGCI) -race "$(RACE_PKGS)" ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The parts of `make test`, with go test's own output.
unit:
	$(GO) test -count=1 ./...

race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# Every fuzz target of the repository (each func FuzzX in a _test.go file:
# the cross-package ones in fuzz/ and those beside their code), one at a
# time, for FUZZTIME each. An input that fails is written by go test to
# testdata/fuzz/FuzzX/ beside its target, where every later go test runs
# it as a seed: commit it with the fix. The failing targets are listed at
# the end.
FUZZTIME ?= 60s
fuzz:
	@failed=""; \
	for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v -e node_modules -e '^./.git/' | sort); do \
	  for n in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== $$(dirname $$f) $$n for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$n$$" -fuzztime $(FUZZTIME) $$(dirname $$f) || failed="$$failed $$(dirname $$f).$$n"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failing:$$failed"; exit 1; fi; echo "fuzz: no failure"

# npm packages for the SDK and CLI end-to-end tests (from e2e/package-lock.json).
e2e-install:
	sh e2e/install.sh

clean:
	rm -rf bin bench/out

include bench/bench.mk
