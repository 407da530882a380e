// Package server is slipstream's HTTP front: it owns the listener, the route
// table, client authentication, admission, and the forwarding of each
// request to its provider (verbatim on the same-dialect path, through
// codec/translate otherwise), streaming every event as it arrives.
//
// It is the only package besides server/upstream that imports fasthttp.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/server/accounts"
	"slipstream/server/admin"
	"slipstream/server/config"
	"slipstream/server/keys"
	"slipstream/server/metrics"
	"slipstream/server/mock"
	"slipstream/server/price"
	"slipstream/server/provider"
	"slipstream/server/store"
	"slipstream/server/upstream"
	"slipstream/server/ws"
)

// Server serves one configuration. Create it with New. A reload (see
// reload.go) builds a new Server, a generation, that shares the listener,
// admission counters, metrics and shared state (the embedded *shared) with
// the one it replaces: requests in flight finish on the generation that
// admitted them.
type Server struct {
	cfg  *config.Config
	reg  *provider.Registry
	keys *keys.Set
	// crossDialect is set when providers speak more than one dialect, so
	// a conversation may carry replay tokens between vendors.
	crossDialect bool
	clients      map[*provider.Provider]*upstream.Client
	mocks        map[*provider.Provider]*mock.Mock
	lists        *modelLists // upstream model lists (list_models)
	labels       *metrics.ModelLabels
	prices       *price.Table  // the price of each model (cost.go)
	guards       *guards       // the guardrails' rule sets, nil when off (guards.go)
	front        frontDoor     // Host and Origin checks (front.go)
	fwd          forwardLists  // client headers forwarded upstream (forward.go)
	access       *slog.Logger  // the access log, nil when off
	stop         chan struct{} // closed when this generation is replaced or shut down
	admits       atomic.Int64  // requests of this generation in flight

	retireOnce sync.Once

	admin *admin.Handler // the management API and the console (adminbridge.go)

	*shared
}

// shared is what every generation of one Server shares.
type shared struct {
	srv      *fasthttp.Server
	log      *log.Logger
	logw     io.Writer
	now      func() time.Time
	version  string // Options.Version
	ready    atomic.Bool
	current  atomic.Pointer[Server]
	metrics  *metrics.Metrics
	store    *store.Store
	ownStore bool               // New opened the store: Shutdown closes it
	cool     provider.Cooldowns // credential cooldowns, kept across reloads
	accts    *accounts.Manager  // subscription accounts (accounts.go), built on first need
	acctOnce sync.Once
	reloads  sync.Mutex // one reload at a time
	ids      idSource

	ws *ws.Transport // the WebSocket transport, across generations

	guardVault guardVault // placeholders' values for restore, across generations (guards.go)

	operatorSide

	// lnMu guards shut and lns: the listeners Serve was given, which
	// Shutdown closes itself, since fasthttp's Shutdown does nothing to a
	// Serve that has not registered its listener yet.
	lnMu sync.Mutex
	shut bool
	lns  []net.Listener

	inflight      atomic.Int64
	bytesInFlight atomic.Int64
	served        atomic.Int64 // requests admitted since start
	panics        atomic.Int64 // panics recovered (each a bug)
}

// Options are the parts of a Server that are not configuration.
type Options struct {
	// Log receives the access log and errors. Default: discard.
	Log io.Writer
	// Now is the clock for created timestamps. Default time.Now.
	Now func() time.Time
	// Metrics receives the request metrics. Default: a new registry.
	Metrics *metrics.Metrics
	// Store holds rate windows, budgets and cooldowns. Default: a new
	// in-process store, or a Redis-backed one when the config names Redis.
	Store *store.Store
	// Version is slipstream's version, named in the User-Agent of
	// translated requests (slipstream/VERSION). Default "dev".
	Version string
	// DefaultLedger is the usage ledger's database when usage.database
	// is not set (slipstream serve passes config.DefaultUsageDatabase).
	// Default "": then the ledger is kept only where usage.database says,
	// so a server built by a test writes nothing into the home directory.
	DefaultLedger string
}

// New builds a server for a validated configuration.
func New(cfg *config.Config, o Options) (*Server, error) {
	if ps := cfg.Validate(); len(ps) > 0 {
		return nil, fmt.Errorf("cannot start with an invalid config: %w", ps)
	}
	sh := &shared{now: o.Now, metrics: o.Metrics, store: o.Store, logw: o.Log, version: o.Version}
	if sh.version == "" {
		sh.version = "dev"
	}
	if sh.now == nil {
		sh.now = time.Now
	}
	if sh.logw == nil {
		sh.logw = io.Discard
	}
	sh.log = log.New(sh.logw, "", log.LstdFlags|log.Lmicroseconds)
	if cfg.Log.Format == "json" { // every line JSON, its time a field (logwriter.go)
		sh.logw = JSONLines(sh.logw)
		sh.log = log.New(sh.logw, "", 0)
	}
	if sh.metrics == nil {
		sh.metrics = metrics.New()
	}
	sh.ids.init()
	sh.hub, sh.started, sh.switches = admin.NewHub(), time.Now(), provider.NewSwitches()
	if sh.store == nil {
		st, err := newStore(cfg, sh.log, sh.metrics)
		if err != nil {
			return nil, err
		}
		sh.store = st
		sh.ownStore = true
	}
	s, err := sh.generation(cfg)
	if err != nil {
		return nil, err
	}
	if err := sh.openLedger(cfg, o.DefaultLedger); err != nil {
		return nil, err
	}
	sh.current.Store(s)
	sh.registerGauges()
	s.srv = &fasthttp.Server{
		Handler:       sh.dispatch,
		ErrorHandler:  sh.handleServerError,
		ExpectHandler: sh.expectContinue,
		Name:          "slipstream",
		// With StreamRequestBody, fasthttp reads min(this, 8 KiB) bytes
		// of a body before the handler runs, and no more: a body over it
		// still reaches the handler as a stream, which body.go reads
		// against limits.max_body_bytes into its own buffer. One byte: a
		// refusal decided from the head goes out without waiting for the
		// body, and an admitted body is copied once, from the read buffer
		// into its exact-size buffer. (A read-ahead of 8 KiB for heads
		// that would be admitted copied those bytes twice, and kept
		// fasthttp's buffer in its pool for every request arriving at
		// once: 8-10 KB per live stream.) The field cannot be 0: that
		// means 4 MiB.
		MaxRequestBodySize: 1,
		// A multipart body would be read whole, to memory and temporary
		// files, before the handler runs; none is accepted anyway (415).
		DisablePreParseMultipartForm: true,
		ReadBufferSize:               8 << 10, // per connection; headers beyond it get 431 in the dialect
		ReadTimeout:                  cfg.Timeouts.HeaderRead.D(),
		// Bounds the write of a whole response that is not a stream; a
		// stream moves the deadline on before each write (extendWrite).
		WriteTimeout: cfg.Timeouts.Write.D(),
		IdleTimeout:  2 * time.Minute,
		// A worker whose connection closed exits after a second without
		// another, not fasthttp's ten: each holds the stack its last
		// request grew (8 KiB for a stream), so a burst of 500 streams
		// kept 4 MB for ten seconds after its clients left.
		MaxIdleWorkerDuration: time.Second,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		CloseOnShutdown:       true,
		// Bodies are read by the handler, after admission, into pooled
		// buffers of their exact size (see body.go).
		StreamRequestBody: true,
		// Every hijack handler closes its connection itself (keepalive.go,
		// handoff.go, linger.go, ws): a WebSocket outlives its handler,
		// which returns at once so that fasthttp's read buffer and request
		// context are not held for the socket's life (ws/socket.go).
		KeepHijackedConns: true,
		Logger:            fasthttpLogger{s.log},
	}
	return s, nil
}

// generation builds the per-configuration part of a Server over sh.
func (sh *shared) generation(cfg *config.Config) (*Server, error) {
	s := &Server{
		cfg:     cfg,
		reg:     provider.NewRegistry(cfg),
		clients: map[*provider.Provider]*upstream.Client{},
		mocks:   map[*provider.Provider]*mock.Mock{},
		stop:    make(chan struct{}),
		shared:  sh,
	}
	if sh.cool == nil {
		sh.cool = sh.store.Cooldowns(s.reg.Cooldowns())
	}
	s.reg.SetCooldowns(sh.cool)
	s.reg.SetSwitches(sh.switches)
	s.labels = metrics.NewModelLabels(cfg)
	s.prices = newPriceTable(cfg)
	gs, err := newGuards(cfg)
	if err != nil {
		return nil, err
	}
	s.guards = gs
	s.front = newFrontDoor(cfg)
	s.fwd = newForwardLists(cfg)
	s.access = newAccessLog(cfg, sh.logw)
	s.admin = s.newAdmin()
	s.lists = newModelLists(s.reg, s.clients, s.log)
	ks, err := keys.New(cfg.Keys, sh.store)
	if err != nil {
		return nil, err
	}
	s.keys = ks
	for _, p := range s.reg.Providers() {
		if p.IsMock() {
			s.mocks[p] = mock.New(p.Config)
			continue
		}
		c, err := newUpstreamClient(cfg, p)
		if err != nil {
			return nil, err
		}
		s.clients[p] = c
	}
	s.crossDialect = crossDialect(s.reg)
	sh.setupWebSocket(s)
	s.setupAccounts()
	return s, nil
}

// dispatch hands a request to the current generation.
func (sh *shared) dispatch(ctx *fasthttp.RequestCtx) { sh.current.Load().handle(ctx) }

// expectContinue answers Expect: 100-continue for the current generation.
func (sh *shared) expectContinue(ctx *fasthttp.RequestCtx) int {
	return sh.current.Load().expectContinue(ctx)
}

// handleServerError answers errors fasthttp detects before the handler.
func (sh *shared) handleServerError(ctx *fasthttp.RequestCtx, err error) {
	sh.current.Load().handleServerError(ctx, err)
}

// Serve accepts connections on ln until Shutdown. It returns nil after a
// graceful shutdown, also one that came first: then it closes ln and
// returns at once.
func (s *Server) Serve(ln net.Listener) error {
	if !s.addListener(ln) {
		return ln.Close()
	}
	stop := make(chan struct{})
	defer close(stop)
	go s.reclaim(stop)
	go s.current.Load().runLists()
	s.warnOpenMetrics(ln)
	s.noteHostNames(ln)
	s.ready.Store(true)
	err := s.srv.Serve(ln)
	s.ready.Store(false)
	if s.isShut() {
		return nil // ln closed under fasthttp by Shutdown
	}
	return err
}

// addListener notes ln for Shutdown; false when Shutdown came first.
func (sh *shared) addListener(ln net.Listener) bool {
	sh.lnMu.Lock()
	defer sh.lnMu.Unlock()
	if sh.shut {
		return false
	}
	sh.lns = append(sh.lns, ln)
	return true
}

// closeListeners marks the server shut and closes every listener Serve
// was given, so that a Serve that fasthttp's Shutdown did not see yet
// returns too.
func (sh *shared) closeListeners() {
	sh.lnMu.Lock()
	defer sh.lnMu.Unlock()
	sh.shut = true
	for _, ln := range sh.lns {
		_ = ln.Close()
	}
}

func (sh *shared) isShut() bool {
	sh.lnMu.Lock()
	defer sh.lnMu.Unlock()
	return sh.shut
}

// Shutdown stops accepting connections and waits for in-flight requests
// and streams to finish, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	cur := s.current.Load()
	cur.shutdownWebSocket(ctx)
	s.hub.Close() // open live feeds must not hold the shutdown
	s.closeListeners()
	err := s.srv.ShutdownWithContext(ctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // the listeners closeListeners closed
	}
	cur.retire()
	for _, c := range cur.clients {
		c.CloseIdle()
	}
	s.closeLedger(ctx)
	if s.ownStore {
		s.store.Close()
	}
	return err
}

// Handler returns the request handler, for tests that serve it themselves.
// Their fasthttp.Server must keep hijacked connections
// (KeepHijackedConns), as Serve's does: a WebSocket outlives the hijack
// handler that takes its socket, and every hijack handler closes its own.
func (s *Server) Handler() fasthttp.RequestHandler { return s.dispatch }

// Config returns the configuration the server runs now.
func (s *Server) Config() *config.Config { return s.current.Load().cfg }

// Metrics returns the server's metrics registry.
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }
