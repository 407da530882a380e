// Package price holds slipstream's price table and the cost arithmetic of
// one request: what a model charges per million tokens of each kind, and
// what a request with a given codec.Usage costs at those prices.
//
// Money is integer: a Rate is micro-dollars per million tokens, which is
// picodollars per token, so every published price (at most six decimals
// of a dollar per million tokens) is exact, and the cost of a request is
// an exact number of picodollars. Looking a model up and pricing a usage
// allocate nothing. The package is pure: no I/O, no network, no clock.
package price

import (
	"math"

	"slipstream/codec"
)

// Rate is a price per million tokens in micro-dollars (USD 1e-6), which
// is also picodollars (USD 1e-12) per token.
type Rate int64

// Rates are a model's prices for each kind of token.
type Rates struct {
	// Input is a prompt token read neither from nor into the cache.
	Input Rate
	// Output is a generated token (visible text, tool calls).
	Output Rate
	// CacheRead is a prompt token read from the provider's prompt cache
	// (Anthropic cache hits, OpenAI cached input, Gemini cached content).
	CacheRead Rate
	// CacheWrite is a prompt token written to the cache for five minutes
	// (Anthropic's default cache_control); CacheWrite1h for one hour.
	CacheWrite, CacheWrite1h Rate
	// Reasoning is a thinking token (OpenAI reasoning, Anthropic
	// thinking, Gemini thoughts). Every provider bills it as output.
	Reasoning Rate
}

// Price is a model's rates, with an optional long-prompt tier: a request
// whose prompt (input tokens, cache reads and writes included) is over
// LongAbove tokens pays Long for every token, output included (Gemini Pro
// above 200k, Claude Haiku 5.5 above 100k, GPT-5.4 above 272k).
type Price struct {
	Rates
	LongAbove int64 // 0: one tier
	Long      Rates
}

// Kind says how a cost was established.
type Kind uint8

// Cost kinds.
const (
	// Unpriced: the model that served the request has no price; the cost
	// is unknown, never zero.
	Unpriced Kind = iota
	// API: the provider's API price of the usage.
	API
	// APIEquivalent: the request was served by a subscription account
	// (claude, codex, gemini code assist), which bills no tokens; the
	// cost is what the API would have charged.
	APIEquivalent
)

// String names k as the access log and metrics do.
func (k Kind) String() string {
	switch k {
	case API:
		return "api"
	case APIEquivalent:
		return "api_equivalent"
	}
	return "unpriced"
}

// Cost is the cost of one request in picodollars (USD 1e-12) and how it
// was established. The zero Cost is unpriced.
type Cost struct {
	Pico int64
	Kind Kind
}

// Priced reports whether c is known (not Unpriced).
func (c Cost) Priced() bool { return c.Kind != Unpriced }

// Nanos is c in nano-dollars (USD 1e-9), rounded up: the unit of money
// budgets, where a fraction of a nano-dollar is charged as a whole one.
func (c Cost) Nanos() int64 { return PicoToNanos(c.Pico) }

// PicoToNanos converts picodollars to nano-dollars, rounding up.
func PicoToNanos(p int64) int64 {
	if p <= 0 {
		return 0
	}
	return (p-1)/1000 + 1
}

// Tier returns the rates a request with prompt tokens pays.
func (p *Price) Tier(prompt int64) *Rates {
	if p.LongAbove > 0 && prompt > p.LongAbove {
		return &p.Long
	}
	return &p.Rates
}

// Of is the cost of u at p, in picodollars. u follows codec.Usage's
// convention: Input counts every prompt token, cache reads and writes
// included, and Output every generated token, reasoning included; so
// each token is charged once, at its kind's rate: fresh input
// (Input - CacheRead - CacheWrite), cache reads, five-minute cache writes
// (CacheWrite - CacheWrite1h), one-hour cache writes, visible output
// (Output - Reasoning) and reasoning. Counts that contradict each
// other (a part larger than its whole) are clamped, never charged twice.
// The result saturates at math.MaxInt64 instead of overflowing.
func (p *Price) Of(u *codec.Usage) int64 {
	r := p.Tier(u.Input)
	read := clamp(u.CacheRead, u.Input)
	write := clamp(u.CacheWrite, u.Input-read)
	hour := clamp(u.CacheWrite1h, write)
	fresh := u.Input - read - write
	think := clamp(u.Reasoning, u.Output)
	visible := max(u.Output, 0) - think
	sum := mul(fresh, r.Input)
	sum = add(sum, mul(read, r.CacheRead))
	sum = add(sum, mul(write-hour, r.CacheWrite))
	sum = add(sum, mul(hour, r.CacheWrite1h))
	sum = add(sum, mul(visible, r.Output))
	return add(sum, mul(think, r.Reasoning))
}

// Estimate is the most a request may cost before it runs: in prompt
// tokens at the input rate (the dearest a prompt token is, but for cache
// writes) and out output tokens, in the tier in puts it in. It prices a
// money budget's reservation.
func (p *Price) Estimate(in, out int64) int64 {
	r := p.Tier(in)
	return add(mul(in, r.Input), mul(out, r.Output))
}

// clamp bounds n to [0, whole].
func clamp(n, whole int64) int64 { return max(min(n, whole), 0) }

// mul is n*r for n >= 0, r >= 0, saturating.
func mul(n int64, r Rate) int64 {
	if n <= 0 || r <= 0 {
		return 0
	}
	if n > math.MaxInt64/int64(r) {
		return math.MaxInt64
	}
	return n * int64(r)
}

// add is a+b for a, b >= 0, saturating.
func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
