package server

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"slipstream/server/config"
)

// watchSettle is how long the config file must stay quiet after a change
// before it is read: editors write a file in several steps (truncate,
// write, rename), and a half-written file must not be judged.
const watchSettle = 250 * time.Millisecond

// WatchConfig reloads the server with load whenever the file at path
// changes, until stop is closed. It watches the file's directory, not the
// file, so that a file replaced by rename (editors, Kubernetes ConfigMaps
// swapping a symlink) is followed; a change that leaves the bytes as they
// were is ignored. The outcome of each reload is logged (see ReloadWith).
func (s *Server) WatchConfig(path string, load func() (*config.Config, error), stop <-chan struct{}) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("cannot watch the config file: %w", err)
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		w.Close()
		return fmt.Errorf("cannot watch the config file: %w", err)
	}
	last := fileDigest(path)
	go func() {
		defer w.Close()
		settle := time.NewTimer(time.Hour)
		settle.Stop()
		for {
			select {
			case <-stop:
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				settle.Reset(watchSettle)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Printf("config watch: %v", err)
			case <-settle.C:
				d := fileDigest(path)
				if bytes.Equal(d, last) {
					continue
				}
				last = d
				_ = s.ReloadWith(path+" (changed)", load) // logged
			}
		}
	}()
	return nil
}

// fileDigest is the SHA-256 of the file at path, or nil when it cannot be
// read (it may be between a remove and a rename).
func fileDigest(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	d := sha256.Sum256(b)
	return d[:]
}
