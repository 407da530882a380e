package bench

import (
	"context"
	"fmt"
	"time"
)

// Workload is one named measurement of the benchmark (docs/BENCHMARKS.md). Run adds rows and notes
// to env.Report; it returns an error only when it could not run at all.
type Workload struct {
	Name string
	Run  func(ctx context.Context, env *Env) error
}

// Workloads is the table `-workload NAME` selects from, in run order.
var Workloads = []Workload{
	{"small", runSmall},
	{"stream", runStream},
	{"large", runLarge},
	{"translate", runTranslate},
	{"soak", runSoak},
	{"fieldmix", runFieldmix},
	{"startup", runStartup},
	{"ws", runWS},
	{"live", runLive},
	{"guard", runGuard},
	{"ledger", runLedger},
	{"baseline", runBaseline},
	{"tokens", runTokens},
}

// Sizes of the generated bodies.
const (
	smallClaudeSize = 10800
	smallChatSize   = 10000
	largeSize       = 1 << 20
	soakSize        = 150 << 10
)

// fixedReq builds a Req for a one-body workload.
func fixedReq(d Dialect, model string, size int, stream bool, seed uint64) *Req {
	o := BodyOpts{Model: model, Size: size, Seed: seed, Stream: stream}
	var body []byte
	switch d {
	case Chat:
		body = AppendChatBody(nil, o)
	case Responses:
		body = AppendResponsesBody(nil, o)
	case Gemini:
		body = AppendGeminiBody(nil, o)
	default:
		body = AppendClaudeBody(nil, o)
	}
	return &Req{Dialect: d, Path: d.Path(model, stream), Body: body, Stream: stream}
}

// runCases measures every case against every target, target-major within
// a case so that ratios sit next to each other.
func runCases(ctx context.Context, env *Env, targets []string, cases []loadCase) {
	for _, lc := range cases {
		for _, t := range targets {
			if ctx.Err() != nil {
				return
			}
			env.Report.Add(env.measure(ctx, t, lc))
		}
	}
}

// small: 10.8 KB Claude-Code-shaped /v1/messages and a 10 KB
// /v1/chat/completions, non-streamed, c=16.
func runSmall(ctx context.Context, env *Env) error {
	d := env.duration(time.Second)
	runCases(ctx, env, env.targets("direct", "revproxy", "slipstream"), []loadCase{
		{"small", "messages 10.8KB", 16, fixedReq(Anthropic, ModelClaude, smallClaudeSize, false, 1), d},
		{"small", "chat 10KB", 16, fixedReq(Chat, ModelChat, smallChatSize, false, 2), d},
	})
	return nil
}

// stream: the 10.8 KB body streamed (20 deltas) at c=1, 8, 32; added time
// to first token against direct in the same run.
func runStream(ctx context.Context, env *Env) error {
	d := env.duration(time.Second)
	req := fixedReq(Anthropic, ModelClaude, smallClaudeSize, true, 1)
	var cases []loadCase
	for _, c := range []int{1, 8, 32} {
		cases = append(cases, loadCase{"stream", "messages 10.8KB stream", c, req, d})
	}
	runCases(ctx, env, env.targets("direct", "revproxy", "slipstream"), cases)
	return nil
}

// large: 1 MB /v1/messages and 1 MB /v1/responses, c=4: CPU per request
// and peak RSS.
func runLarge(ctx context.Context, env *Env) error {
	d := env.duration(time.Second)
	runCases(ctx, env, env.targets("direct", "revproxy", "slipstream"), []loadCase{
		{"large", "messages 1MB", 4, fixedReq(Anthropic, ModelClaude, largeSize, false, 3), d},
		{"large", "responses 1MB", 4, fixedReq(Responses, ModelResponses, largeSize, false, 4), d},
	})
	return nil
}

// translate: the small and large Anthropic bodies sent to a model served
// by an OpenAI chat provider. Skipped with a note while slipstream
// answers 501 (translation not built yet).
func runTranslate(ctx context.Context, env *Env) error {
	targets := env.targets("slipstream")
	if len(targets) == 0 {
		env.Report.Notef("translate: skipped, slipstream is not available")
		return nil
	}
	small := fixedReq(Anthropic, ModelXlateChat, smallClaudeSize, false, 1)
	if code, body, err := env.probe(small); err != nil || code != 200 {
		env.Report.Notef("translate: skipped, slipstream answered %d to a cross-dialect request (Anthropic client -> OpenAI chat provider): %s %v", code, clip(body), err)
		return nil
	}
	d := env.duration(time.Second)
	runCases(ctx, env, targets, []loadCase{
		{"translate", "messages->chat 10.8KB", 16, small, d},
		{"translate", "messages->chat 10.8KB stream", 8, fixedReq(Anthropic, ModelXlateChat, smallClaudeSize, true, 1), d},
		{"translate", "messages->chat 1MB", 4, fixedReq(Anthropic, ModelXlateChat, largeSize, false, 3), d},
	})
	return nil
}

// probe sends r once to a fresh slipstream and returns the status and
// body.
func (env *Env) probe(r *Req) (int, []byte, error) {
	p, err := env.Start("slipstream", ConfigLimits{})
	if err != nil {
		return 0, nil, err
	}
	defer p.Stop() //nolint:errcheck // a probe only reads the answer
	return postOnce(p.URL, r)
}

// postOnce sends r once with a fresh client.
func postOnce(url string, r *Req) (int, []byte, error) {
	res, err := Run(context.Background(), LoadConfig{
		URL: url, Duration: 30 * time.Second, MaxPerWorker: 1,
		Next: func(w, i int) *Req { return r },
	})
	if err != nil {
		return 0, nil, err
	}
	for code := range res.Status {
		return code, []byte(res.FirstError), nil
	}
	return 0, []byte(res.FirstError), fmt.Errorf("cannot post %s: no answer", r.Path)
}
