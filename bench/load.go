package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Req is one request the load generator sends. The generator only reads
// Body; a Req may be shared by all workers.
type Req struct {
	Dialect Dialect
	Path    string // path and query, appended to LoadConfig.URL
	Body    []byte
	Stream  bool
}

// LoadConfig configures one closed-loop run: Concurrency workers, each
// sending its next request as soon as the previous answer is read in full.
type LoadConfig struct {
	URL          string        // target base URL, e.g. http://127.0.0.1:8317
	Concurrency  int           // workers; default 1
	Warmup       time.Duration // sent but not measured; default 0
	Duration     time.Duration // measured window after Warmup; required (> 0)
	MaxPerWorker int           // requests per worker at most; default 1<<20
	// Next returns worker w's i-th request (i counts from 0), or nil when
	// worker w has no more to send. Called by worker w only, after its
	// previous request was answered.
	Next func(w, i int) *Req
	// OnMeasure, if set, is called when the measured window opens (true)
	// and closes (false), e.g. to read the proxy's CPU time.
	OnMeasure func(open bool)
	Client    *http.Client // default NewClient(Concurrency)
	// Refusal, if set, is asked about every non-2xx answer; true counts it
	// as Refused (an expected refusal, e.g. a 429 in the client's dialect)
	// instead of an error. The body is only valid during the call.
	Refusal func(r *Req, status int, body []byte) bool
}

// LoadResult is what one run measured. Counts of failures cover the whole
// run, warm-up included; Requests, Lat and TTFE cover the measured window.
type LoadResult struct {
	Requests   int           // completed 2xx with terminal marker, in the window
	Errors     int           // transport errors + Non2xx + Incomplete
	Non2xx     int           // responses with a status outside 2xx
	Incomplete int           // 2xx responses without their dialect's terminal marker
	Refused    int           // non-2xx answers LoadConfig.Refusal accepted (whole run)
	Status     map[int]int   // count per HTTP status (whole run)
	FirstError string        // the first failure, clipped, for the report
	Window     time.Duration // measured window length
	Lat        Percentiles   // request latency
	TTFE       Percentiles   // time to the first SSE event (streams only)
}

// Percentiles of a latency distribution.
type Percentiles struct {
	P50, P90, P99 time.Duration
}

// RPS returns measured requests per second.
func (r *LoadResult) RPS() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Window.Seconds()
}

// NewClient returns an HTTP/1.1 client keeping up to conns idle
// connections to one host, without compression or timeouts shorter than
// a minute.
func NewClient(conns int) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
		WriteBufferSize:     64 << 10,
		ReadBufferSize:      32 << 10,
	}
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// phases of a run
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// loadRun is the shared state of one Run.
type loadRun struct {
	cfg   *LoadConfig
	phase atomic.Int32
	mu    sync.Mutex
	res   LoadResult
	lat   []time.Duration
	ttfe  []time.Duration
}

// worker is one closed loop's private state.
type worker struct {
	id   int
	buf  []byte
	lat  []time.Duration
	ttfe []time.Duration
	fail failCounts
}

type failCounts struct {
	errors, non2xx, incomplete, refused int
	status                              map[int]int
	first                               string
}

// Run performs one closed-loop run. It returns an error only when the
// configuration is unusable; failed requests are counted in the result.
func Run(ctx context.Context, cfg LoadConfig) (*LoadResult, error) {
	if cfg.Duration <= 0 || cfg.Next == nil || cfg.URL == "" {
		return nil, fmt.Errorf("cannot run load: Duration, Next and URL are required")
	}
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if cfg.MaxPerWorker <= 0 {
		cfg.MaxPerWorker = 1 << 20
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(cfg.Concurrency)
		defer cfg.Client.CloseIdleConnections()
	}
	lr := &loadRun{cfg: &cfg, res: LoadResult{Status: map[int]int{}}}
	var wg sync.WaitGroup
	workersDone := make(chan struct{})
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr.work(ctx, w)
		}()
	}
	go func() { wg.Wait(); close(workersDone) }()
	lr.clock(ctx, workersDone)
	<-workersDone
	return lr.result(), nil
}

// clock drives the phases: warm-up, measured window, stop. A run whose
// workers all finish early (MaxPerWorker) closes the window then.
func (lr *loadRun) clock(ctx context.Context, done <-chan struct{}) {
	cfg := lr.cfg
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-done:
			return false
		case <-ctx.Done():
			return false
		}
	}
	wait(cfg.Warmup)
	start := time.Now()
	lr.phase.Store(phaseMeasure)
	if cfg.OnMeasure != nil {
		cfg.OnMeasure(true)
	}
	wait(cfg.Duration)
	lr.phase.Store(phaseStop)
	lr.res.Window = time.Since(start)
	if cfg.OnMeasure != nil {
		cfg.OnMeasure(false)
	}
}

// work is one worker's loop, bounded by MaxPerWorker and the stop phase.
func (lr *loadRun) work(ctx context.Context, id int) {
	w := &worker{id: id, buf: make([]byte, 0, 64<<10), fail: failCounts{status: map[int]int{}}}
	for i := 0; i < lr.cfg.MaxPerWorker && lr.phase.Load() != phaseStop && ctx.Err() == nil; i++ {
		r := lr.cfg.Next(id, i)
		if r == nil {
			break
		}
		lr.one(ctx, w, r)
	}
	lr.merge(w)
}

// one sends r and reads the whole answer.
func (lr *loadRun) one(ctx context.Context, w *worker, r *Req) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, lr.cfg.URL+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		w.fail.add(fmt.Sprintf("cannot build request: %v", err))
		return
	}
	r.Dialect.SetHeaders(req.Header)
	resp, err := lr.cfg.Client.Do(req)
	if err != nil {
		w.fail.add(fmt.Sprintf("cannot send %s: %v", r.Path, err))
		return
	}
	ttfe, err := w.read(resp.Body, start, r.Stream)
	resp.Body.Close()
	w.fail.status[resp.StatusCode]++
	switch {
	case err != nil:
		w.fail.add(fmt.Sprintf("cannot read answer of %s: %v", r.Path, err))
	case resp.StatusCode/100 != 2 && lr.cfg.Refusal != nil && lr.cfg.Refusal(r, resp.StatusCode, w.buf):
		w.fail.refused++
	case resp.StatusCode/100 != 2:
		w.fail.non2xx++
		w.fail.add(fmt.Sprintf("status %d from %s: %q", resp.StatusCode, r.Path, clip(w.buf)))
	case !r.Dialect.Complete(w.buf, r.Stream):
		w.fail.incomplete++
		w.fail.add(fmt.Sprintf("no terminal marker from %s (stream=%v): %q", r.Path, r.Stream, tail(w.buf)))
	case lr.phase.Load() == phaseMeasure:
		w.lat = append(w.lat, time.Since(start))
		if r.Stream {
			w.ttfe = append(w.ttfe, ttfe)
		}
	}
}

// add counts one failure and keeps the first message.
func (f *failCounts) add(msg string) {
	f.errors++
	if f.first == "" {
		f.first = msg
	}
}

var eventEnd = []byte("\n\n")

// read reads body into w.buf and, for streams, returns the time from
// start to the end of the first SSE event.
func (w *worker) read(body io.Reader, start time.Time, stream bool) (time.Duration, error) {
	w.buf = w.buf[:0]
	var ttfe time.Duration
	for {
		if len(w.buf) == cap(w.buf) {
			w.buf = slices.Grow(w.buf, cap(w.buf))
		}
		n, err := body.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+n]
		if stream && ttfe == 0 && n > 0 && bytes.Contains(w.buf, eventEnd) {
			ttfe = time.Since(start)
		}
		if err == io.EOF {
			return ttfe, nil
		}
		if err != nil {
			return ttfe, err
		}
	}
}

// merge folds a finished worker's figures into the run.
func (lr *loadRun) merge(w *worker) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.lat = append(lr.lat, w.lat...)
	lr.ttfe = append(lr.ttfe, w.ttfe...)
	r := &lr.res
	r.Errors += w.fail.errors
	r.Non2xx += w.fail.non2xx
	r.Incomplete += w.fail.incomplete
	r.Refused += w.fail.refused
	for k, v := range w.fail.status {
		r.Status[k] += v
	}
	if r.FirstError == "" {
		r.FirstError = w.fail.first
	}
}

func (lr *loadRun) result() *LoadResult {
	r := lr.res
	r.Requests = len(lr.lat)
	r.Lat = percentiles(lr.lat)
	r.TTFE = percentiles(lr.ttfe)
	return &r
}

// percentiles sorts d in place and returns its p50/p90/p99.
func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[min(int(p*float64(len(d))), len(d)-1)] }
	return Percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99)}
}

// tail returns at most the last 120 bytes of b.
func tail(b []byte) []byte {
	if len(b) > 120 {
		return b[len(b)-120:]
	}
	return b
}
