package price

import (
	"math"
	"testing"

	"slipstream/codec"
)

// pico is dollars per million tokens times tokens, in picodollars: the
// figure a price page gives, computed by hand for each case below.
func TestCostPerProvider(t *testing.T) {
	tab := NewTable(nil)
	f := func(model string, u codec.Usage, want int64) {
		t.Helper()
		p, ok := tab.Lookup(model)
		if !ok {
			t.Fatalf("%s: no price", model)
		}
		if got := p.Of(&u); got != want {
			t.Fatalf("%s %+v: cost %d pUSD, want %d", model, u, got, want)
		}
	}
	// Anthropic, as its decoder fills Usage: Input = input_tokens +
	// cache_creation_input_tokens + cache_read_input_tokens.
	// Sonnet 4.5: 1000 fresh x $3 + 2000 writes x $3.75 + 5000 reads x
	// $0.30 + 400 out x $15 (100 of them thinking, also $15).
	f("claude-sonnet-4-5-20250929", codec.Usage{Input: 8000, CacheWrite: 2000, CacheRead: 5000, Output: 400, Reasoning: 100},
		1000*3_000_000+2000*3_750_000+5000*300_000+400*15_000_000)
	// One-hour cache writes pay 2x input ($6 on Sonnet 4.5), the rest of
	// the writes 1.25x.
	f("claude-sonnet-4-5", codec.Usage{Input: 3000, CacheWrite: 2000, CacheWrite1h: 500, Output: 10},
		1000*3_000_000+1500*3_750_000+500*6_000_000+10*15_000_000)
	// Opus 4.5: $5 in, $6.25 write, $0.50 hit, $25 out.
	f("claude-opus-4-5", codec.Usage{Input: 10, CacheWrite: 3, CacheRead: 4, Output: 7},
		3*5_000_000+3*6_250_000+4*500_000+7*25_000_000)
	// Haiku 5.5 is tiered at 100k prompt tokens, cache included.
	f("claude-haiku-5-5", codec.Usage{Input: 100_000, CacheRead: 60_000, Output: 10},
		40_000*100_000+60_000*10_000+10*500_000)
	f("claude-haiku-5-5", codec.Usage{Input: 100_001, CacheRead: 60_000, Output: 10},
		40_001*500_000+60_000*50_000+10*2_500_000)
	// OpenAI: prompt_tokens include cached_tokens; completion_tokens
	// include reasoning_tokens. gpt-4o: $2.50 in, $1.25 cached, $10 out.
	f("gpt-4o-2024-08-06", codec.Usage{Input: 1200, CacheRead: 1024, Output: 300, Reasoning: 0},
		176*2_500_000+1024*1_250_000+300*10_000_000)
	// The May 2024 snapshot kept its own price.
	f("gpt-4o-2024-05-13", codec.Usage{Input: 100, Output: 10}, 100*5_000_000+10*15_000_000)
	// gpt-5-mini: reasoning tokens are output tokens, charged once.
	f("gpt-5-mini", codec.Usage{Input: 5000, CacheRead: 4096, Output: 2000, Reasoning: 1500},
		904*250_000+4096*25_000+2000*2_000_000)
	// gpt-5.4 above 272k prompt tokens: $5 / $0.50 / $22.50.
	f("gpt-5.4", codec.Usage{Input: 300_000, CacheRead: 100_000, Output: 1000},
		200_000*5_000_000+100_000*500_000+1000*22_500_000)
	// Gemini: promptTokenCount includes cachedContentTokenCount; Output
	// is candidates + thoughts. 2.5 Pro at <= 200k and above.
	f("gemini-2.5-pro", codec.Usage{Input: 11_500, CacheRead: 10_000, Output: 11_000, Reasoning: 10_000},
		1500*1_250_000+10_000*125_000+11_000*10_000_000)
	f("gemini-2.5-pro", codec.Usage{Input: 250_000, CacheRead: 50_000, Output: 100},
		200_000*2_500_000+50_000*250_000+100*15_000_000)
	f("gemini-2.5-flash", codec.Usage{Input: 1000, Output: 1000, Reasoning: 800},
		1000*300_000+1000*2_500_000)
	// Nothing used costs nothing.
	f("gemini-2.5-flash", codec.Usage{}, 0)
}

func TestOfNeverChargesTwice(t *testing.T) {
	p := Price{Rates: Rates{Input: 10, Output: 100, CacheRead: 1, CacheWrite: 20, CacheWrite1h: 30, Reasoning: 1000}}
	f := func(u codec.Usage, want int64) {
		t.Helper()
		if got := p.Of(&u); got != want {
			t.Fatalf("%+v: %d, want %d", u, got, want)
		}
	}
	// Parts larger than their whole are clamped to it.
	f(codec.Usage{Input: 10, CacheRead: 30}, 10*1)
	f(codec.Usage{Input: 10, CacheRead: 4, CacheWrite: 30}, 4*1+6*20)
	f(codec.Usage{Output: 5, Reasoning: 9}, 5*1000)
	f(codec.Usage{Input: 10, CacheWrite: 4, CacheWrite1h: 9}, 6*10+4*30)
	// Negative counts cost nothing.
	f(codec.Usage{Input: -5, Output: -1}, 0)
	// Overflow saturates.
	f(codec.Usage{Input: math.MaxInt64, Output: math.MaxInt64}, math.MaxInt64)
}

func TestLookup(t *testing.T) {
	over := []Entry{
		{Model: "gpt-4o", Price: Price{Rates: Rates{Input: 1}}},
		{Model: "my-*", Price: Price{Rates: Rates{Input: 2}}},
		{Model: "claude-*", Price: Price{Rates: Rates{Input: 3}}},
	}
	tab := NewTable(over)
	f := func(model string, want Rate, ok bool) {
		t.Helper()
		p, found := tab.Lookup(model)
		if found != ok || found && p.Input != want {
			t.Fatalf("Lookup(%q) = %v %v, want input %d %v", model, p, found, want, ok)
		}
	}
	f("gpt-4o", 1, true)            // an override wins
	f("gpt-4o-2024-08-06", 1, true) // its snapshots too
	f("my-model", 2, true)          // a pattern adds
	f("claude-sonnet-4-5", 3, true) // an override pattern beats a built-in name
	f("gpt-4o-mini", 150_000, true) // the built-in table under them
	f("gemini-2.5-pro", 1_250_000, true)
	f("gpt-4o-mini-2024-07-18", 150_000, true)
	f("unknown-model", 0, false) // unpriced, not free
	f("", 0, false)
	f("gpt-4o-minix", 0, false)
	var none *Table
	if _, ok := none.Lookup("gpt-4o"); ok {
		t.Fatal("a nil table priced a model")
	}
}

func TestBase(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Base(in); got != want {
			t.Fatalf("Base(%q) = %q, want %q", in, got, want)
		}
	}
	f("claude-sonnet-4-5-20250929", "claude-sonnet-4-5")
	f("claude-sonnet-4-5@20250929", "claude-sonnet-4-5")
	f("gpt-4o-2024-08-06", "gpt-4o")
	f("claude-3-5-haiku-latest", "claude-3-5-haiku")
	f("gpt-4o", "gpt-4o")
	f("model-2024", "model-2024")
	f("x-2024-08-0a", "x-2024-08-0a")
	f("-20250929", "-20250929")
}

func TestBuiltinIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Builtin {
		if seen[e.Model] {
			t.Fatalf("%s is listed twice", e.Model)
		}
		seen[e.Model] = true
		for _, r := range []*Rates{&e.Price.Rates, &e.Price.Long} {
			if r == &e.Price.Long && e.Price.LongAbove == 0 {
				continue
			}
			if r.Input <= 0 || r.Output <= 0 || r.CacheRead <= 0 || r.CacheWrite <= 0 || r.CacheWrite1h <= 0 || r.Reasoning != r.Output {
				t.Fatalf("%s: incomplete rates %+v", e.Model, *r)
			}
		}
	}
	for _, m := range []string{"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", "gpt-5", "gpt-5-mini", "gpt-4o", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview"} {
		if !seen[m] {
			t.Fatalf("%s has no built-in price", m)
		}
	}
}

func TestPicoToNanos(t *testing.T) {
	f := func(p, want int64) {
		t.Helper()
		if got := PicoToNanos(p); got != want {
			t.Fatalf("PicoToNanos(%d) = %d, want %d", p, got, want)
		}
	}
	f(0, 0)
	f(-5, 0)
	f(1, 1)
	f(1000, 1)
	f(1001, 2)
	f(2_000_000, 2000)
}
