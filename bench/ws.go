package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
)

// The ws workload: Codex-shaped turns over the Responses WebSocket, one
// socket per worker: a full frame, then wsChain-1 frames that each chain
// on the previous response and carry one tool output. Beside it, the same
// turns over HTTP+SSE, as Codex sends them there: every turn POSTs the
// whole conversation so far. The figure to compare is slipstream's CPU
// per turn.

const (
	wsTurnSize = 40 << 10 // Codex's first real request is ~40 KB (tools and instructions)
	wsChain    = 8        // turns per conversation before it starts over
)

// codexTurns are one conversation's turns in both forms.
type codexTurns struct {
	frames [][]byte // WebSocket frames: full, then chained increments
	posts  []*Req   // the same turns as HTTP requests, whole conversation each
}

// buildCodexTurns builds a conversation from a generated Responses body.
// Turn j's HTTP body holds the first body's input, then for each earlier
// turn the stub's answer and a tool output; turn j's frame holds only the
// latest tool output.
func buildCodexTurns() (*codexTurns, error) {
	body := AppendResponsesBody(nil, BodyOpts{Model: ModelResponses, Size: wsTurnSize, Seed: 7, Stream: true})
	in := gjson.GetBytes(body, "input")
	if !in.IsArray() || in.Index <= 0 {
		return nil, fmt.Errorf("cannot build ws turns: the generated body has no input array")
	}
	closeAt := in.Index + len(in.Raw) - 1 // the input's closing bracket
	answer := `{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}`
	t := &codexTurns{}
	var history []byte
	for j := 0; j < wsChain; j++ {
		output := fmt.Sprintf(`{"type":"function_call_output","call_id":"call_%d","output":%q}`, j, strings.Repeat("ok ", 60))
		if j == 0 {
			t.frames = append(t.frames, append([]byte(`{"type":"response.create",`), body[1:]...))
		} else {
			history = append(history, ","+answer+","+output...)
			f := []byte(`{"type":"response.create","previous_response_id":"resp_bench",`)
			f = append(f, body[1:in.Index]...)
			f = append(f, "["+output+"]"...)
			f = append(f, body[closeAt+1:]...)
			t.frames = append(t.frames, f)
		}
		post := append(append(append([]byte{}, body[:closeAt]...), history...), body[closeAt:]...)
		t.posts = append(t.posts, &Req{Dialect: Responses, Path: Responses.Path(ModelResponses, true), Body: post, Stream: true})
	}
	return t, nil
}

func runWS(ctx context.Context, env *Env) error {
	targets := env.targets("slipstream")
	if len(targets) == 0 {
		env.Report.Notef("ws: skipped, slipstream is not available")
		return nil
	}
	turns, err := buildCodexTurns()
	if err != nil {
		return err
	}
	d := env.duration(time.Second)
	for _, c := range []int{1, 8} {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // a cancelled run ends with what it measured
		}
		env.Report.Add(env.measureTurns(ctx, "http+sse", c, turns, d))
		env.Report.Add(env.measureTurns(ctx, "websocket", c, turns, d))
	}
	return nil
}

// measureTurns runs the conversation over one transport against a fresh
// slipstream, Opts.Runs times, and returns the row of medians.
func (e *Env) measureTurns(ctx context.Context, transport string, conc int, turns *codexTurns, dur time.Duration) Row {
	row := Row{Workload: "ws", Case: fmt.Sprintf("codex turns 40KB %s", transport), Target: "slipstream", Concurrency: conc}
	p, err := e.Start("slipstream", ConfigLimits{})
	if err != nil {
		row.Failed, row.Note = true, err.Error()
		return row
	}
	s := NewSampler(p.PID(), 0)
	s.Start()
	runs := make([]Row, 0, e.Opts.Runs)
	for i := 0; i < e.Opts.Runs && ctx.Err() == nil; i++ {
		if transport == "websocket" {
			runs = append(runs, e.runWSOnce(ctx, p, conc, turns, dur))
			continue
		}
		runs = append(runs, e.runHTTPTurns(ctx, p, conc, turns, dur))
	}
	peak, last, serr := s.Stop()
	row = medianRow(row, runs)
	row.PeakRSSMB = mb(max(peak, last.HWM))
	e.closeTarget(p, &row, serr)
	e.logf("%-10s %-28s %-10s c=%-3d %8.0f turns/s p50 %.3f ms cpu %.0f us/turn err %d %s",
		row.Workload, row.Case, row.Target, row.Concurrency, row.RPS, row.LatP50Ms, row.CPUPerReqUs, row.Errors, row.Note)
	return row
}

// runHTTPTurns is one warm-up plus measured window of the conversation's
// HTTP turns, each worker sending them in order.
func (e *Env) runHTTPTurns(ctx context.Context, p *Proc, conc int, turns *codexTurns, dur time.Duration) Row {
	cw := &cpuWindow{pid: p.PID()}
	res, err := Run(ctx, LoadConfig{
		URL: p.URL, Concurrency: conc, Warmup: e.Opts.Warmup, Duration: dur,
		Next:      func(w, i int) *Req { return turns.posts[i%len(turns.posts)] },
		OnMeasure: cw.edge,
	})
	if err != nil {
		return Row{Failed: true, Note: err.Error()}
	}
	proxy, self := cw.perReq(res.Requests)
	return Row{
		Requests: res.Requests, Errors: res.Errors, RPS: res.RPS(),
		LatP50Ms: ms(res.Lat.P50), LatP90Ms: ms(res.Lat.P90), LatP99Ms: ms(res.Lat.P99),
		CPUPerReqUs: proxy, LoadCPUPerReqUs: self, Note: res.FirstError,
	}
}

// runWSOnce is one warm-up plus measured window of WebSocket turns.
func (e *Env) runWSOnce(ctx context.Context, p *Proc, conc int, turns *codexTurns, dur time.Duration) Row {
	cw := &cpuWindow{pid: p.PID()}
	var phase atomic.Int32
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	var first string
	var wg sync.WaitGroup
	url := "ws" + strings.TrimPrefix(p.URL, "http") + "/v1/responses"
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := wsWorker(ctx, url, turns, &phase)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, mine...)
			if err != nil {
				errs++
				if first == "" {
					first = err.Error()
				}
			}
		}()
	}
	sleepCtx(ctx, e.Opts.Warmup)
	start := time.Now()
	phase.Store(phaseMeasure)
	cw.edge(true)
	sleepCtx(ctx, dur)
	phase.Store(phaseStop)
	window := time.Since(start)
	cw.edge(false)
	wg.Wait()
	proxy, self := cw.perReq(len(lat))
	res := LoadResult{Window: window, Requests: len(lat), Lat: percentiles(lat)}
	return Row{
		Requests: len(lat), Errors: errs, RPS: res.RPS(),
		LatP50Ms: ms(res.Lat.P50), LatP90Ms: ms(res.Lat.P90), LatP99Ms: ms(res.Lat.P99),
		CPUPerReqUs: proxy, LoadCPUPerReqUs: self, Note: first,
	}
}

// wsWorker sends the conversation's frames over one socket until the stop
// phase, and returns the latency of each turn completed in the measured
// window.
func wsWorker(ctx context.Context, url string, turns *codexTurns, phase *atomic.Int32) ([]time.Duration, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer bench-key")
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 32 << 10, WriteBufferSize: 64 << 10}
	c, _, err := d.DialContext(ctx, url, h)
	if err != nil {
		return nil, fmt.Errorf("cannot open the websocket: %w", err)
	}
	defer c.Close()
	var lat []time.Duration
	for i := 0; phase.Load() != phaseStop && ctx.Err() == nil; i++ {
		start := time.Now()
		if err := c.WriteMessage(websocket.TextMessage, turns.frames[i%len(turns.frames)]); err != nil {
			return lat, fmt.Errorf("cannot send a frame: %w", err)
		}
		if err := readTurn(c); err != nil {
			return lat, err
		}
		if phase.Load() == phaseMeasure {
			lat = append(lat, time.Since(start))
		}
	}
	return lat, nil
}

var (
	frameCompleted = []byte(`{"type":"response.completed"`)
	frameError     = []byte(`{"type":"error"`)
)

// readTurn reads frames until response.completed.
func readTurn(c *websocket.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("cannot read a frame: %w", err)
		}
		if bytes.HasPrefix(b, frameCompleted) {
			return nil
		}
		if bytes.HasPrefix(b, frameError) {
			return fmt.Errorf("error event: %s", clip(b))
		}
	}
}
