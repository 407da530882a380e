package bench

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The memory promise under a limit: with GOMEMLIMIT=64MiB, a burst of 1 MB bodies at c=64
// for 10 s is served (200) or refused (429 in the client's dialect); the
// process never exceeds the limit by more than 25% and never dies.
const (
	memLimit      = 64 << 20
	memLimitSlack = 1.25
	burstConc     = 64
	burstBody     = 1 << 20
	burstFor      = 10 * time.Second
)

// buildSlipstreamOrSkip builds ./cmd/slipstream into dir; it skips only
// in -short. A build failure fails the test.
func buildSlipstreamOrSkip(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short: builds slipstream and bursts for 10 s")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "slipstream")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/slipstream")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cmd/slipstream does not build: %v\n%s", err, clip(out))
	}
	return bin
}

func TestGOMEMLIMITBurstOfLargeBodies(t *testing.T) {
	dir := t.TempDir()
	bin := buildSlipstreamOrSkip(t, dir)
	stub := NewStub(StubConfig{})
	if err := stub.Start(); err != nil {
		t.Fatal(err)
	}
	defer stub.Close()
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := WriteConfig(dir, addr, stub.URL(), ConfigLimits{MaxBodyBytes: 4 << 20, MaxBytesInFlight: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartSlipstream(bin, cfg, addr, append(stateEnv(dir), "GOMEMLIMIT=64MiB"), Pinning{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop() //nolint:errcheck // checked below on the happy path
	res, peak, last := burst(t, p)
	t.Logf("served %d, refused %d (429), errors %d, peak VmRSS %.1f MiB, VmHWM %.1f MiB, statuses %v",
		res.Requests, res.Refused, res.Errors, mb(peak), mb(last.HWM), res.Status)
	if res.Errors != 0 {
		t.Errorf("%d requests failed (neither 200 nor a 429 in the client's dialect); first: %s", res.Errors, res.FirstError)
	}
	if res.Requests == 0 {
		t.Errorf("no request was served")
	}
	if limit := int64(memLimit * memLimitSlack); peak > limit || last.HWM > limit {
		t.Errorf("RSS exceeded GOMEMLIMIT by more than 25%%: peak VmRSS %.1f MiB, VmHWM %.1f MiB, limit %.1f MiB",
			mb(peak), mb(last.HWM), mb(limit))
	}
	if !p.Alive() {
		t.Fatalf("slipstream died: %s", p.Stderr())
	}
	if err := waitReady(p, 2*time.Second); err != nil {
		t.Errorf("not ready after the burst: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("no graceful exit: %v", err)
	}
}

// burst sends 1 MB bodies (half of the workers streamed) at c=64 for 10 s
// and samples the process's RSS every 10 ms.
func burst(t *testing.T, p *Proc) (*LoadResult, int64, Mem) {
	t.Helper()
	plain := fixedReq(Anthropic, ModelClaude, burstBody, false, 11)
	streamed := fixedReq(Anthropic, ModelClaude, burstBody, true, 12)
	s := NewSampler(p.PID(), 10*time.Millisecond)
	s.Start()
	res, err := Run(context.Background(), LoadConfig{
		URL: p.URL, Concurrency: burstConc, Duration: burstFor,
		Next: func(w, i int) *Req {
			if w%2 == 0 {
				return plain
			}
			return streamed
		},
		Refusal: func(r *Req, status int, body []byte) bool {
			return status == http.StatusTooManyRequests && r.Dialect.IsDialectError(body)
		},
	})
	peak, last, serr := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Errorf("cannot sample RSS (did it die?): %v", serr)
	}
	return res, peak, last
}
