package repo

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var static struct {
	once sync.Once
	path string
	err  string
}

// staticBinary builds slipstream the way the Dockerfile does (make static)
// once per run.
func staticBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found: cannot run the Dockerfile's build step (make static)")
	}
	static.once.Do(func() {
		dir, err := os.MkdirTemp("", "slipstream-static")
		if err != nil {
			static.err = err.Error()
			return
		}
		p := filepath.Join(dir, "slipstream")
		cmd := exec.Command("make", "-s", "static", "BIN="+p, "VERSION=repo-test")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			static.err = err.Error() + "\n" + string(out)
			return
		}
		static.path = p
	})
	if static.path == "" {
		t.Fatalf("make static failed: %s", static.err)
	}
	return static.path
}

// TestDockerfileStaticBuild: the image's build step gives a static binary
// (no program interpreter, no shared libraries), which is what lets it run
// on a distroless base; the Dockerfile uses that step, runs as non-root,
// checks /readyz with the binary itself and takes its config from a volume.
func TestDockerfileStaticBuild(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RUN make static", "USER nonroot", "HEALTHCHECK", `"health", "-config", "/etc/slipstream/slipstream.yaml"`, "VOLUME", "/etc/slipstream/slipstream.yaml", "FROM gcr.io/distroless/static"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	f, err := elf.Open(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the static build has a program interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the static build needs shared libraries %v", libs)
	}
	out, err := exec.Command(staticBinary(t), "version").Output()
	if err != nil || string(out) != "slipstream repo-test\n" {
		t.Fatalf("static binary version: %q %v", out, err)
	}
}

// TestSystemdUnit: the unit is hardened as promised, GOMEMLIMIT sits below
// MemoryMax, and systemd-analyze verify accepts it (with ExecStart pointed
// at a built binary, since verify wants it to exist).
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../../deploy/slipstream.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{"User=slipstream", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n",
		// The config read in place, so hot reload sees edits; SIGHUP on reload.
		"-config /etc/slipstream/slipstream.yaml", "ExecReload=/bin/kill -HUP $MAINPID", "StateDirectory=slipstream"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	mm := regexp.MustCompile(`(?m)^MemoryMax=(\d+)M$`).FindStringSubmatch(unit)
	gl := regexp.MustCompile(`(?m)^Environment=GOMEMLIMIT=(\d+)MiB$`).FindStringSubmatch(unit)
	if mm == nil || gl == nil {
		t.Fatalf("unit must set MemoryMax=NM and GOMEMLIMIT=NMiB")
	}
	max, _ := strconv.Atoi(mm[1])
	lim, _ := strconv.Atoi(gl[1])
	if float64(lim)*1.048576 >= float64(max)*0.9 { // MiB vs M; 10% headroom at least
		t.Fatalf("GOMEMLIMIT=%dMiB is not comfortably below MemoryMax=%dM", lim, max)
	}
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed: the unit's syntax was not verified (apt-get install systemd provides it)")
	}
	bin := staticBinary(t)
	tmp := filepath.Join(t.TempDir(), "slipstream.service")
	os.WriteFile(tmp, []byte(strings.ReplaceAll(unit, "/usr/local/bin/slipstream", bin)), 0o644)
	out, err := exec.Command(sa, "verify", tmp).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if static.path != "" {
		os.RemoveAll(filepath.Dir(static.path))
	}
	os.Exit(code)
}
