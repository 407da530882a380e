package server

import (
	"fmt"
	"time"

	"slipstream/server/config"
)

// Reload serves cfg from now on. cfg is validated first: an invalid one is
// refused with its problems and the running configuration keeps serving.
// A valid one becomes a new generation, swapped in atomically; requests
// already admitted finish on the generation that admitted them, whose
// resources are let go once its last request ends. Rate windows, budgets
// and cooldowns live in the shared store, keyed by key and credential
// names, so they carry over to the names that still exist, except the
// cooldowns of a provider whose base_url, proxy or keys changed.
//
// Settings bound at start (listen, tls, redis) keep their first value; a
// change to them is logged as needing a restart.
func (s *Server) Reload(cfg *config.Config) error {
	if ps := cfg.Validate(); len(ps) > 0 {
		return ps
	}
	s.reloads.Lock()
	defer s.reloads.Unlock()
	old := s.current.Load()
	next, err := s.generation(cfg)
	if err != nil {
		return err
	}
	s.current.Store(next)
	forgetMoved(old.cfg, cfg, s.cool)
	s.revokeWebSockets(next)
	s.revokeFeeds(next)
	if s.ready.Load() {
		go next.runLists()
	}
	go old.drain()
	for _, w := range restartOnly(old.cfg, cfg) {
		s.log.Printf("config reload: %s changed; it takes effect after a restart", w)
	}
	return nil
}

// ReloadWith loads a configuration with load and serves it, logging the
// outcome; src names where it came from. A configuration that does not
// load or validate is logged with its problems and the old one stays.
func (s *Server) ReloadWith(src string, load func() (*config.Config, error)) error {
	cfg, err := load()
	if err == nil {
		err = s.Reload(cfg)
	}
	s.metrics.Reload(err == nil)
	s.noteReload(src, load, err)
	if err != nil {
		s.log.Printf("config reload from %s rejected; the previous configuration keeps serving:\n%v", src, err)
		return fmt.Errorf("cannot reload %s: %w", src, err)
	}
	s.log.Printf("config reloaded from %s", src)
	return nil
}

// restartOnly names the settings that differ between a and b but are bound
// when the process starts.
func restartOnly(a, b *config.Config) []string {
	var ws []string
	if a.Listen != b.Listen {
		ws = append(ws, "listen")
	}
	if a.TLS != b.TLS {
		ws = append(ws, "tls")
	}
	if a.Redis != b.Redis {
		ws = append(ws, "redis")
	}
	if !a.Usage.Equal(&b.Usage) {
		ws = append(ws, "usage")
	}
	if a.Limits.GCPercent != b.Limits.GCPercent {
		ws = append(ws, "limits.gc_percent")
	}
	if a.Timeouts.HeaderRead != b.Timeouts.HeaderRead {
		ws = append(ws, "timeouts.header_read")
	}
	if a.Timeouts.Write != b.Timeouts.Write {
		ws = append(ws, "timeouts.write (for whole responses; streams use the new value)")
	}
	if a.Limits.MaxBodyBytes != b.Limits.MaxBodyBytes {
		ws = append(ws, "limits.max_body_bytes (for bodies fasthttp reads before slipstream sees them)")
	}
	return ws
}

// runLists refreshes the upstream model lists until the generation is
// retired.
func (s *Server) runLists() { s.lists.run(s.stop) }

// retire stops the generation's background work. It may be called more
// than once.
func (s *Server) retire() {
	s.retireOnce.Do(func() { close(s.stop) })
}

// drain retires a replaced generation: once its last request has ended
// its upstream connections are closed. WebSocket connections are not the
// generation's: they serve each frame on the current one.
func (s *Server) drain() {
	s.retire()
	for s.admits.Load() > 0 {
		time.Sleep(drainPoll)
	}
	for _, c := range s.clients {
		c.CloseIdle()
	}
}

// drainPoll is how often a replaced generation checks for its last
// request.
const drainPoll = 500 * time.Millisecond
