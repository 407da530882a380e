package server

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"slipstream/server/config"
)

// watchKeysConfig configures keys alice and (when bob is set) bob.
func watchKeysConfig(bob bool) string {
	y := "keys:\n  - {name: alice, key: sk-alice-0123456789}\n"
	if bob {
		y += "  - {name: bob, key: sk-bob-0123456789ab}\n"
	}
	return y + "providers:\n  - {name: m, kind: mock, models: [\"mock*\"]}\n"
}

// scribble writes a file beside the config every 50 ms until the test
// ends (a log file, say), at most 2000 times.
func scribble(t *testing.T, dir string) {
	t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		f, err := os.OpenFile(filepath.Join(dir, "slipstream.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 2000; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				_, _ = f.WriteString("a log line\n")
			}
		}
	}()
}

// watchServer serves the keys config from the file at path (written by
// the caller) and watches it.
func watchServer(t *testing.T, path string) string {
	t.Helper()
	base, s := serveConfigServer(t, parseConfig(t, watchKeysConfig(true), ""), nil)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	if err := s.WatchConfig(path, func() (*config.Config, error) { return config.LoadFile(path, config.Override{}) }, stop); err != nil {
		t.Fatal(err)
	}
	return base
}

// waitRevoked polls with bob's key until it is refused with 401, and
// fails the test when that takes longer than 2 s from the edit.
func waitRevoked(t *testing.T, base string, edited time.Time) {
	t.Helper()
	body := `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for {
		status, _, b := post(t, base+"/v1/messages", body, "Authorization", "Bearer sk-bob-0123456789ab")
		if status == 401 {
			return
		}
		if status != 200 {
			t.Fatalf("bob before the reload: %d %s", status, b)
		}
		if time.Since(edited) > 2*time.Second {
			t.Fatalf("bob's key still served %v after the edit that removed it", time.Since(edited))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfigWatchBesideBusyFile: a file beside the config written every
// 50 ms does not hold a reload back: an edit that removes a key takes
// effect within 2 s.
func TestConfigWatchBesideBusyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(watchKeysConfig(true)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := watchServer(t, path)
	scribble(t, dir)
	time.Sleep(300 * time.Millisecond) // the scribbling is under way (the scenario, not a synchronisation)

	tmp := filepath.Join(dir, ".s.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(watchKeysConfig(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitRevoked(t, base, edited)
}

// TestConfigWatchConfigMapSwap: a config mounted from a Kubernetes
// ConfigMap (the path a symlink through ..data to a timestamped
// directory) is reloaded when ..data is swapped atomically, while a file
// beside it is written every 50 ms.
func TestConfigWatchConfigMapSwap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	version := func(name, yml string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "s.yaml"), []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_12_01_10_00_00.1", watchKeysConfig(true))
	if err := os.Symlink("..2026_12_01_10_00_00.1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.Symlink(filepath.Join("..data", "s.yaml"), path); err != nil {
		t.Fatal(err)
	}
	base := watchServer(t, path)
	scribble(t, dir)
	time.Sleep(300 * time.Millisecond) // the scribbling is under way

	// The kubelet's swap: a new timestamped directory, a new symlink
	// beside ..data, renamed over it.
	version("..2026_12_01_10_05_00.2", watchKeysConfig(false))
	if err := os.Symlink("..2026_12_01_10_05_00.2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_12_01_10_00_00.1")); err != nil {
		t.Fatal(err)
	}
	waitRevoked(t, base, edited)
}

// TestConcernsConfig: only the config file itself and the ConfigMap's
// ..data symlink can change the config.
func TestConcernsConfig(t *testing.T) {
	t.Parallel()
	f := func(event string, want bool) {
		t.Helper()
		if got := concernsConfig(event, "s.yaml"); got != want {
			t.Fatalf("concernsConfig(%q) = %v, want %v", event, got, want)
		}
	}
	f("/etc/slipstream/s.yaml", true)
	f("/etc/slipstream/..data", true)
	f("/etc/slipstream/slipstream.log", false)
	f("/etc/slipstream/.s.yaml.tmp", false) // the rename onto s.yaml is what counts
	f("/etc/slipstream/..data_tmp", false)
	f("/etc/slipstream/s.yaml~", false)
}

// TestConfigWatchBusyConfigFile: a config file replaced every 100 ms
// (each time whole, by rename) is still read within 1 s of the first
// change: an edit removing a key takes effect within 2 s.
func TestConfigWatchBusyConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(watchKeysConfig(true)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := watchServer(t, path)
	stop, done := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-done }()
	edited := time.Now()
	go func() {
		defer close(done)
		tmp := filepath.Join(dir, ".s.yaml.tmp")
		for i := 0; i < 100; i++ { // at most 10 s
			yml := watchKeysConfig(false) + "# revision " + strconv.Itoa(i) + "\n"
			if err := os.WriteFile(tmp, []byte(yml), 0o600); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	waitRevoked(t, base, edited)
}
