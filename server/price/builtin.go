package price

import "math"

// Taken is the date the built-in prices were read from the providers'
// public price pages (standard tier, text, USD per million tokens):
//
//   - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing
//     and the model pages under https://platform.claude.com/docs/models/
//   - OpenAI: https://developers.openai.com/api/docs/pricing (Standard)
//   - Google: https://ai.google.dev/gemini-api/docs/pricing (paid tier)
//
// Rows the main page did not show were taken from the provider's own
// model pages or help center as quoted elsewhere (GPT-5.6 Sol, Terra and
// Luna from OpenAI's preview announcement; the Codex models from OpenAI's
// Codex rate card, 25 credits to the dollar).
//
// Prices change; `prices:` in the configuration overrides or adds entries
// without a new build. Batch, flex and priority tiers, data-residency
// multipliers, audio/image/video inputs, cache storage per hour and tool
// fees (web search, code execution) are not in the table.
const Taken = "2026-12-01"

// Builtin is the price table compiled into slipstream, by exact model
// name; dated snapshots ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06")
// find their model through Base. Every provider bills reasoning tokens as
// output, so Reasoning is Output throughout.
var Builtin = builtin()

func builtin() []Entry {
	var es []Entry
	add := func(p Price, names ...string) {
		for _, n := range names {
			es = append(es, Entry{Model: n, Price: p})
		}
	}

	// Anthropic: a 5-minute cache write is 1.25x input, a 1-hour write 2x,
	// a cache hit 0.1x (0.05x or less on the newest models, as listed).
	add(claude(10, 50, 0.25), "claude-fable-5-1", "claude-mythos-5-1")
	add(claude(10, 50, 1), "claude-fable-5", "claude-mythos-5")
	add(claude(4, 20, 0.20), "claude-opus-5-5")
	add(claude(5, 25, 0.50), "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5")
	add(claude(15, 75, 1.50), "claude-opus-4-1", "claude-opus-4-0", "claude-opus-4", "claude-3-opus")
	add(claude(2, 10, 0.10), "claude-sonnet-5-5") // cache hits cut from $0.20 on 2026-10-07
	add(claude(2, 10, 0.20), "claude-sonnet-5")
	add(claude(3, 15, 0.30), "claude-sonnet-4-6", "claude-3-7-sonnet", "claude-3-5-sonnet")
	// Sonnet 4 and 4.5 with the 1M context window: a prompt over 200k
	// tokens pays $6 / $22.50 for the whole request.
	add(longTier(claude(3, 15, 0.30), 200_000, claude(6, 22.50, 0.60)), "claude-sonnet-4-5", "claude-sonnet-4-0", "claude-sonnet-4")
	add(longTier(claude(0.10, 0.50, 0.01), 100_000, claude(0.50, 2.50, 0.05)), "claude-haiku-5-5")
	add(claude(1, 5, 0.10), "claude-haiku-4-5")
	add(claude(0.80, 4, 0.08), "claude-3-5-haiku")
	add(claude(0.25, 1.25, 0.03), "claude-3-haiku")

	// OpenAI: cached input as listed; no cache writes are billed (a write
	// is charged as input). The pro models have no cached price: a cached
	// token pays input.
	// GPT-5.6 (limited preview): Sol, Terra, Luna.
	add(openai(5, 0.50, 30), "gpt-5.6-sol", "gpt-5.5")
	add(openai(2.50, 0.25, 15), "gpt-5.6-terra")
	add(openai(1, 0.10, 6), "gpt-5.6-luna")
	add(openai(30, 30, 180), "gpt-5.5-pro", "gpt-5.4-pro")
	// GPT-5.4 above 272k prompt tokens: 2x input, 1.5x output.
	add(longTier(openai(2.50, 0.25, 15), 272_000, openai(5, 0.50, 22.50)), "gpt-5.4")
	add(openai(0.75, 0.075, 4.50), "gpt-5.4-mini")
	add(openai(0.20, 0.02, 1.25), "gpt-5.4-nano")
	add(openai(1.75, 0.175, 14), "gpt-5.2", "gpt-5.2-codex", "gpt-5.3-codex")
	add(openai(21, 21, 168), "gpt-5.2-pro")
	add(openai(1.25, 0.125, 10), "gpt-5.1", "gpt-5", "gpt-5-codex", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5-chat-latest")
	add(openai(15, 15, 120), "gpt-5-pro")
	add(openai(0.25, 0.025, 2), "gpt-5-mini", "gpt-5.1-codex-mini")
	add(openai(0.05, 0.005, 0.40), "gpt-5-nano")
	add(openai(2, 0.50, 8), "gpt-4.1", "o3")
	add(openai(0.40, 0.10, 1.60), "gpt-4.1-mini")
	add(openai(0.10, 0.025, 0.40), "gpt-4.1-nano")
	add(openai(1.10, 0.275, 4.40), "o4-mini")
	add(openai(2.50, 1.25, 10), "gpt-4o")
	add(openai(5, 5, 15), "gpt-4o-2024-05-13") // the first snapshot kept its launch price
	add(openai(0.15, 0.075, 0.60), "gpt-4o-mini")

	// Google Gemini: "output price (including thinking tokens)"; context
	// caching is created through its own API, so a generateContent
	// request reads from the cache but writes nothing (a write, if one
	// were reported, is charged as input).
	// Gemini 3.5 Flash's cache price is not in the copy of the page read
	// for this table: it is Google's usual tenth of the input price.
	add(gemini(1.50, 0.15, 9), "gemini-3.5-flash")
	add(longTier(gemini(2, 0.20, 12), 200_000, gemini(4, 0.40, 18)), "gemini-3.1-pro-preview", "gemini-3-pro-preview")
	add(gemini(0.25, 0.025, 1.50), "gemini-3.1-flash-lite-preview")
	add(gemini(0.50, 0.05, 3), "gemini-3-flash-preview")
	add(longTier(gemini(1.25, 0.125, 10), 200_000, gemini(2.50, 0.25, 15)), "gemini-2.5-pro")
	add(gemini(0.30, 0.03, 2.50), "gemini-2.5-flash")
	add(gemini(0.10, 0.01, 0.40), "gemini-2.5-flash-lite")
	add(gemini(0.10, 0.025, 0.40), "gemini-2.0-flash")
	add(gemini(0.075, 0.075, 0.30), "gemini-2.0-flash-lite")
	return es
}

// usd converts dollars per million tokens to a Rate, exactly for any
// price with at most six decimals.
func usd(d float64) Rate { return Rate(math.Round(d * 1e6)) }

// claude is an Anthropic price: cache writes at 1.25x (5 min) and 2x
// (1 h) the input price.
func claude(in, out, hit float64) Price {
	i := usd(in)
	return Price{Rates: Rates{Input: i, Output: usd(out), CacheRead: usd(hit),
		CacheWrite: usd(in * 1.25), CacheWrite1h: 2 * i, Reasoning: usd(out)}}
}

// openai is an OpenAI price (no cache write premium).
func openai(in, cached, out float64) Price {
	i := usd(in)
	return Price{Rates: Rates{Input: i, Output: usd(out), CacheRead: usd(cached),
		CacheWrite: i, CacheWrite1h: i, Reasoning: usd(out)}}
}

// gemini is a Gemini price (no cache write through generateContent).
func gemini(in, cached, out float64) Price { return openai(in, cached, out) }

// longTier adds long's rates to p for prompts over above tokens.
func longTier(p Price, above int64, long Price) Price {
	p.LongAbove, p.Long = above, long.Rates
	return p
}
