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

// watchMaxDelay bounds how long a change waits for quiet: it is read at
// most this long after its first event, however the file keeps changing.
const watchMaxDelay = time.Second

// configMapData is the symlink a Kubernetes ConfigMap volume swaps
// atomically (rename over it) to replace every file it mounts at once.
const configMapData = "..data"

// WatchConfig reloads the server with load whenever the file at path
// changes, until stop is closed. It watches the file's directory, not the
// file, so that a file replaced by rename (editors, Kubernetes ConfigMaps
// swapping their ..data symlink) is followed; events for other files in
// the directory (a log file written beside the config) are ignored. A
// change is read once the file has been quiet for watchSettle, and at most
// watchMaxDelay after its first event; a change that leaves the bytes as
// they were is ignored. The outcome of each reload is logged (see
// ReloadWith).
func (s *Server) WatchConfig(path string, load func() (*config.Config, error), stop <-chan struct{}) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("cannot watch the config file: %w", err)
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		w.Close()
		return fmt.Errorf("cannot watch the config file: %w", err)
	}
	s.noteReloadSource(path, load)
	go s.watchFile(w, path, load, stop)
	return nil
}

// watchFile is WatchConfig's loop; it closes w when it returns.
func (s *Server) watchFile(w *fsnotify.Watcher, path string, load func() (*config.Config, error), stop <-chan struct{}) {
	defer w.Close()
	name, last := filepath.Base(path), fileDigest(path)
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	var first time.Time // the first event of the pending change; zero when none
	for {
		select {
		case <-stop:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !concernsConfig(ev.Name, name) {
				continue
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			settle.Reset(min(watchSettle, first.Add(watchMaxDelay).Sub(now)))
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Printf("config watch: %v", err)
		case <-settle.C:
			first = time.Time{}
			d := fileDigest(path)
			if bytes.Equal(d, last) {
				continue
			}
			last = d
			_ = s.ReloadWith(path+" (changed)", load) // logged
		}
	}
}

// concernsConfig reports whether an event for the file named event may
// change the config file called name: an event for that file, or for the
// ConfigMap's ..data symlink it resolves through.
func concernsConfig(event, name string) bool {
	b := filepath.Base(event)
	return b == name || b == configMapData
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
