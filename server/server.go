// Package server is slipstream's HTTP front: it owns the listener, the route
// table, client authentication, admission, and the forwarding of each
// request to its provider (verbatim on the same-dialect path, through
// codec/translate otherwise), streaming every event as it arrives.
//
// It is the only package besides server/upstream that imports fasthttp.
package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/server/config"
	"slipstream/server/keys"
	"slipstream/server/mock"
	"slipstream/server/provider"
	"slipstream/server/upstream"
	"slipstream/server/ws"
)

// Server serves one configuration. Create it with New.
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
	ws           *ws.Transport

	srv   *fasthttp.Server
	log   *log.Logger
	now   func() time.Time
	ready atomic.Bool

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
}

// New builds a server for a validated configuration.
func New(cfg *config.Config, o Options) (*Server, error) {
	if ps := cfg.Validate(); len(ps) > 0 {
		return nil, fmt.Errorf("cannot start with an invalid config: %w", ps)
	}
	s := &Server{
		cfg:     cfg,
		reg:     provider.NewRegistry(cfg),
		clients: map[*provider.Provider]*upstream.Client{},
		mocks:   map[*provider.Provider]*mock.Mock{},
		now:     o.Now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	w := o.Log
	if w == nil {
		w = io.Discard
	}
	s.log = log.New(w, "", log.LstdFlags|log.Lmicroseconds)
	s.lists = newModelLists(s.reg, s.clients, s.log)
	ks, err := keys.New(cfg.Keys)
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
	s.ws = s.newWebSocket()
	s.srv = &fasthttp.Server{
		Handler:            s.handle,
		ErrorHandler:       s.handleServerError,
		ExpectHandler:      s.expectContinue,
		Name:               "slipstream",
		MaxRequestBodySize: int(cfg.Limits.MaxBodyBytes.N()),
		ReadBufferSize:     8 << 10, // per connection; headers beyond it get 431 in the dialect
		ReadTimeout:        cfg.Timeouts.HeaderRead.D(),
		// Bounds the write of a whole response that is not a stream; a
		// stream moves the deadline on before each write (extendWrite).
		WriteTimeout:          cfg.Timeouts.Write.D(),
		IdleTimeout:           2 * time.Minute,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		CloseOnShutdown:       true,
		// Bodies are read by the handler, after admission, into pooled
		// buffers of their exact size (see body.go).
		StreamRequestBody: true,
		Logger:            fasthttpLogger{s.log},
	}
	return s, nil
}

// Serve accepts connections on ln until Shutdown. It returns nil after a
// graceful shutdown.
func (s *Server) Serve(ln net.Listener) error {
	stop := make(chan struct{})
	defer close(stop)
	go s.reclaim(stop)
	go s.lists.run(stop)
	s.ready.Store(true)
	err := s.srv.Serve(ln)
	s.ready.Store(false)
	return err
}

// Shutdown stops accepting connections and waits for in-flight requests
// and streams to finish, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	s.shutdownWebSocket(ctx)
	err := s.srv.ShutdownWithContext(ctx)
	for _, c := range s.clients {
		c.CloseIdle()
	}
	return err
}

// Handler returns the request handler, for tests that serve it themselves.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handle }

// Config returns the configuration the server runs.
func (s *Server) Config() *config.Config { return s.cfg }
