//go:build pprof

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's profiling endpoints (/debug/pprof/) on addr, a
// separate listener the operator opts into with -pprof (keep it on
// loopback: profiles reveal request contents). It returns at once; the
// listener lives as long as the process.
//
// It is compiled in only with -tags pprof (make build-pprof): net/http's
// package initialisation alone adds 0.8 MB to idle RSS, paid even when the
// flag is unused.
func servePprof(addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen for pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(stderr, "pprof on http://%s/debug/pprof/\n", ln.Addr())
	return nil
}
