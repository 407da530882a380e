package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
)

// The live workload: how much memory a live stream holds. liveStreams
// clients each open one stream of a 10 KB request at once, against an
// upstream that paces its 20 events 100 ms apart, so that every stream is
// alive together for about two seconds; the proxy's peak RSS above idle,
// divided by the streams, is the memory one live stream holds. Four kinds:
// same-dialect and translated, over HTTP+SSE and over the Responses
// WebSocket. A fresh proxy per kind and run; the row is the median.
// Gates: the per-stream budget, no errors, and RSS 5 s after the clients
// left within liveRestGateMB of idle. fastproxy, fasthttp with nothing
// of slipstream's, runs the same-dialect HTTP kind beside it: what the
// stack alone holds per live stream.

const (
	liveStreams = 500
	livePace    = 100 * time.Millisecond
	liveBody    = 10 << 10
	// livePerStreamBudget is the budget per live stream beyond its
	// request body (docs/BENCHMARKS.md).
	livePerStreamBudget = 40 << 10
	liveRest            = 5 * time.Second // resting RSS is read this long after the load
	// liveRestGateMB is how far above idle the resting RSS may stay, in MB.
	liveRestGateMB = 6
)

// liveKind is one kind of live stream.
type liveKind struct {
	name string
	req  *Req // the stream's request; over WebSocket, its body is the frame's
	ws   bool
	// reference: fastproxy runs this kind too (it passes bytes through:
	// no translation, no WebSocket).
	reference bool
}

func liveKinds() []liveKind {
	frame := func(model string) *Req {
		body := AppendResponsesBody(nil, BodyOpts{Model: model, Size: liveBody, Seed: 11, Stream: true})
		return &Req{Dialect: Responses, Body: append([]byte(`{"type":"response.create",`), body[1:]...), Stream: true}
	}
	return []liveKind{
		{name: "messages same-dialect http", req: fixedReq(Anthropic, ModelClaude, liveBody, true, 9), reference: true},
		{name: "messages->chat translated http", req: fixedReq(Anthropic, ModelXlateChat, liveBody, true, 10)},
		{name: "responses same-dialect websocket", req: frame(ModelResponses), ws: true},
		{name: "responses->chat translated websocket", req: frame(ModelXlateChat), ws: true},
	}
}

func runLive(ctx context.Context, env *Env) error {
	if len(env.targets("slipstream")) == 0 {
		env.Report.Notef("live: skipped, slipstream is not available")
		return nil
	}
	stub := NewStub(StubConfig{Delay: livePace})
	if err := stub.Start(); err != nil {
		return err
	}
	defer stub.Close() //nolint:errcheck // the run is over
	for _, k := range liveKinds() {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // a cancelled run ends with what it measured
		}
		env.Report.Add(env.liveRow(ctx, stub, k, "slipstream"))
		if k.reference {
			for _, t := range env.targets("fastproxy") {
				env.Report.Add(env.liveRow(ctx, stub, k, t))
			}
		}
	}
	return nil
}

// liveRow measures one kind on target Opts.Runs times and reports the
// medians. Only slipstream's row is gated; fastproxy's is the reference
// beside it.
func (e *Env) liveRow(ctx context.Context, stub *Stub, k liveKind, target string) Row {
	row := Row{Workload: "live", Case: fmt.Sprintf("%s %dKB x %d paced", k.name, len(k.req.Body)>>10, liveStreams), Target: target, Concurrency: liveStreams}
	var per, anon, idle, peak, rest []float64
	for i := 0; i < max(e.Opts.Runs, 1) && ctx.Err() == nil; i++ {
		r, err := e.liveOnce(ctx, stub, k, target)
		row.Requests += r.Requests
		row.Errors += r.Errors
		if err != nil {
			row.Failed, row.Note = true, err.Error()
			return row
		}
		if r.Note != "" {
			row.Note = r.Note
		}
		per, anon = append(per, r.perStreamKB), append(anon, r.perStreamAnonKB)
		idle, peak, rest = append(idle, r.IdleRSSMB), append(peak, r.PeakRSSMB), append(rest, r.RestRSSMB)
	}
	row.Runs = len(per)
	row.IdleRSSMB, row.PeakRSSMB, row.RestRSSMB = median(idle), median(peak), median(rest)
	row.PerStreamKB, row.PerStreamAnonKB = median(per), median(anon)
	restOver := row.RestRSSMB - row.IdleRSSMB
	note := fmt.Sprintf("rest-idle %.1f MB (gate %d); anonymous %.1f KB per stream", restOver, liveRestGateMB, row.PerStreamAnonKB)
	gated := target == "slipstream"
	if gated {
		row.BudgetKB = float64(livePerStreamBudget+len(k.req.Body)) / 1024
	} else {
		note = fmt.Sprintf("reference, not gated; rest-idle %.1f MB; anonymous %.1f KB per stream", restOver, row.PerStreamAnonKB)
	}
	if row.Note != "" {
		note = row.Note + "; " + note
	}
	row.Note = note
	row.Failed = row.Failed || row.Errors > 0 || gated && (row.PerStreamKB > row.BudgetKB || restOver > liveRestGateMB)
	budget := "not gated"
	if gated {
		budget = fmt.Sprintf("budget %.1f", row.BudgetKB)
	}
	e.logf("live       %-44s %-10s per stream %.1f KB (%s), anonymous %.1f KB; idle %.1f peak %.1f rest %.1f MB err %d",
		k.name, target, row.PerStreamKB, budget, row.PerStreamAnonKB, row.IdleRSSMB, row.PeakRSSMB, row.RestRSSMB, row.Errors)
	return row
}

// liveResult is one run of a kind.
type liveResult struct {
	Row
	perStreamKB, perStreamAnonKB float64
}

// liveOnce starts target on stub, opens liveStreams streams at once and
// reads them to their end while sampling the proxy's RSS.
func (e *Env) liveOnce(ctx context.Context, stub *Stub, k liveKind, target string) (liveResult, error) {
	p, err := e.startLive(target, stub)
	if err != nil {
		return liveResult{}, err
	}
	defer p.Stop() //nolint:errcheck // the row is already measured
	sleepCtx(ctx, 2*time.Second)
	idle, err := ReadMem(p.PID())
	if err != nil {
		return liveResult{}, err
	}
	s := NewSampler(p.PID(), 10*time.Millisecond)
	s.Start()
	client := NewClient(liveStreams)
	errs, first := openLive(ctx, client, p.URL, k)
	peakRSS, last, serr := s.Stop()
	if serr != nil {
		return liveResult{}, serr
	}
	client.CloseIdleConnections() // at rest the clients are gone
	sleepCtx(ctx, liveRest)
	restMem, err := ReadMem(p.PID())
	if err != nil {
		return liveResult{}, err
	}
	// VmHWM covers a peak between two samples.
	peak := max(peakRSS, last.HWM)
	r := liveResult{Row: Row{Requests: liveStreams, Errors: errs, Note: first,
		IdleRSSMB: mb(idle.RSS), PeakRSSMB: mb(peak), RestRSSMB: mb(restMem.RSS)}}
	r.perStreamKB = float64(peak-idle.RSS) / liveStreams / 1024
	r.perStreamAnonKB = float64(s.PeakAnon()-idle.Anon) / liveStreams / 1024
	return r, nil
}

// startLive starts a fresh target in front of stub for one run.
func (e *Env) startLive(target string, stub *Stub) (*Proc, error) {
	if target == "fastproxy" {
		return StartFastProxy(e.FastProxy, stub.URL(), e.Opts.Pin)
	}
	return e.startSlipstream(stub.URL(), ConfigLimits{MaxConcurrent: 4 * liveStreams})
}

// openLive opens liveStreams streams of kind k against base at once and
// reads each to its end; it returns how many failed and the first error.
func openLive(ctx context.Context, client *http.Client, base string, k liveKind) (int, string) {
	var failed atomic.Int64
	var once sync.Once
	var first string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < liveStreams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var err error
			if k.ws {
				err = liveWS(ctx, base, k.req.Body)
			} else {
				err = liveHTTP(ctx, client, base, k.req)
			}
			if err != nil {
				failed.Add(1)
				once.Do(func() { first = err.Error() })
			}
		}()
	}
	close(start)
	wg.Wait()
	return int(failed.Load()), first
}

// liveHTTP posts req and reads its stream to the terminal event.
func liveHTTP(ctx context.Context, c *http.Client, base string, req *Req) error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+req.Path, bytes.NewReader(req.Body))
	if err != nil {
		return err
	}
	req.Dialect.SetHeaders(hr.Header)
	resp, err := c.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !req.Dialect.Complete(b, true) {
		return fmt.Errorf("status %d, incomplete stream: %s", resp.StatusCode, clip(b))
	}
	return nil
}

// liveWS sends one frame over a new socket and reads the turn to
// response.completed.
func liveWS(ctx context.Context, base string, frame []byte) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer bench-key")
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 4 << 10, WriteBufferSize: 16 << 10}
	c, resp, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/responses", h)
	if resp != nil {
		resp.Body.Close() // the upgrade's response has no body to read
	}
	if err != nil {
		return fmt.Errorf("cannot open the websocket: %w", err)
	}
	defer c.Close()
	if err := c.WriteMessage(websocket.TextMessage, frame); err != nil {
		return fmt.Errorf("cannot send a frame: %w", err)
	}
	return readTurn(c)
}
