package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"slipstream/server/config"
)

// certReloader serves the certificate in cfg's files and picks up a
// renewed one without a restart: on a handshake, at most once per
// interval, it compares the files' modification times and sizes with the
// loaded ones and reloads when either changed. A pair that fails to load
// (a renewal caught half-written) keeps the old certificate and is retried
// on a later handshake.
type certReloader struct {
	cfg      config.TLS
	interval time.Duration
	log      io.Writer

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // mtimes and sizes of the loaded files
	checked time.Time
}

func newCertReloader(cfg config.TLS, log io.Writer) (*certReloader, error) {
	r := &certReloader{cfg: cfg, interval: time.Second, log: log}
	if err := r.load(r.fileStamp()); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) fileStamp() string {
	s := ""
	for _, f := range []string{r.cfg.CertFile, r.cfg.KeyFile} {
		if st, err := os.Stat(f); err == nil {
			s += fmt.Sprintf("%d/%d;", st.ModTime().UnixNano(), st.Size())
		}
	}
	return s
}

func (r *certReloader) load(stamp string) error {
	c, err := tls.LoadX509KeyPair(r.cfg.CertFile, r.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("cannot load tls certificate: %w", err)
	}
	r.cert, r.stamp = &c, stamp
	return nil
}

// GetCertificate is tls.Config.GetCertificate.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.checked) >= r.interval {
		r.checked = now
		if st := r.fileStamp(); st != r.stamp {
			if err := r.load(st); err != nil {
				fmt.Fprintf(r.log, "tls: keeping the previous certificate: %v\n", err)
			} else {
				fmt.Fprintf(r.log, "tls: reloaded %s\n", r.cfg.CertFile)
			}
		}
	}
	return r.cert, nil
}

// tlsListener wraps ln so that it serves TLS with cfg's certificate,
// reloaded when its files change. HTTP/1.1 only: that is what the server
// speaks.
func tlsListener(ln net.Listener, cfg config.TLS, log io.Writer) (net.Listener, error) {
	r, err := newCertReloader(cfg, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return tls.NewListener(ln, &tls.Config{
		GetCertificate: r.GetCertificate,
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"http/1.1"},
	}), nil
}
