package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// USD is an amount of US dollars, exact to the micro-dollar (1e-6), read
// from a plain decimal number ("25", "0.075", "1_000.50"). In a price it
// is dollars per million tokens; in budget_usd, dollars.
type USD int64

// MaxUSD is the largest amount USD reads: a billion dollars.
const MaxUSD = USD(1e15)

// Micros is u in micro-dollars.
func (u USD) Micros() int64 { return int64(u) }

// String writes u as a decimal number of dollars without trailing zeros.
func (u USD) String() string {
	s := strconv.FormatInt(int64(u)/1e6, 10)
	if f := int64(u) % 1e6; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
	}
	return s
}

// UnmarshalText reads a non-negative decimal number of dollars with at
// most six decimals.
func (u *USD) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(strings.TrimPrefix(string(b), "$"), "_", "")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || strings.Trim(whole+frac, "0123456789") != "" {
		return fmt.Errorf("want an amount in dollars such as 25 or 0.075, got %q", clip(string(b)))
	}
	if len(frac) > 6 {
		return errors.New("at most 6 decimals: a micro-dollar is the finest amount")
	}
	if len(whole) > 10 {
		return fmt.Errorf("over the largest amount, %s", MaxUSD)
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	v := USD(w*1e6 + f)
	if v > MaxUSD {
		return fmt.Errorf("over the largest amount, %s", MaxUSD)
	}
	*u = v
	return nil
}

// MarshalYAML writes u as a YAML number (check -print).
func (u USD) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: u.String()}, nil
}

// Price prices one model, or every model a glob pattern matches, in
// dollars per million tokens; it overrides or adds to the table built
// into slipstream (docs/OPERATIONS.md, "Prices and spend"). The model is
// the upstream model that served a request, after aliases and failover.
type Price struct {
	// Model is a model name, or a pattern with '*' and '?'. An exact name
	// also prices its dated snapshots (name-20250929, name-2024-08-06).
	Model string `yaml:"model"`
	// Input, Output, CacheRead, CacheWrite, CacheWrite1h and Reasoning
	// are as in PriceRates.
	Input        *USD `yaml:"input"`
	Output       *USD `yaml:"output"`
	CacheRead    *USD `yaml:"cache_read"`
	CacheWrite   *USD `yaml:"cache_write"`
	CacheWrite1h *USD `yaml:"cache_write_1h"`
	Reasoning    *USD `yaml:"reasoning"`
	// LongAbove, when set, prices a request whose prompt (input, cache
	// reads and writes) is over this many tokens at Long, every token of
	// it (Gemini Pro above 200000). Default 0: one tier.
	LongAbove int64 `yaml:"long_above"`
	// Long are the rates above LongAbove, with the same defaults.
	Long *PriceRates `yaml:"long"`
}

// PriceRates are the prices of each kind of token, in dollars per
// million tokens. Input and Output are required.
type PriceRates struct {
	// Input is a prompt token that is neither read from nor written to a
	// prompt cache.
	Input *USD `yaml:"input"`
	// Output is a generated token.
	Output *USD `yaml:"output"`
	// CacheRead is a prompt token read from the cache. Default: Input.
	CacheRead *USD `yaml:"cache_read"`
	// CacheWrite is a prompt token written to the cache (for five minutes
	// on Anthropic). Default: Input.
	CacheWrite *USD `yaml:"cache_write"`
	// CacheWrite1h is a token written to Anthropic's one-hour cache.
	// Default: CacheWrite.
	CacheWrite1h *USD `yaml:"cache_write_1h"`
	// Reasoning is a thinking token. Default: Output (every provider
	// bills thinking as output).
	Reasoning *USD `yaml:"reasoning"`
}

// maxRate bounds a price per million tokens, so that no cost can
// overflow: $100000 per million tokens is far above any model's.
const maxRate = USD(100_000 * 1e6)

func (c *Config) validatePrices(add func(string, string, ...any)) {
	seen := map[string]int{}
	for i := range c.Prices {
		p := &c.Prices[i]
		path := fmt.Sprintf("prices[%d]", i)
		switch m := strings.TrimSpace(p.Model); {
		case m == "":
			add(path+".model", "missing model (a model name or a pattern such as \"my-model-*\")")
		case m != p.Model:
			add(path+".model", "the model has spaces around it")
		default:
			if j, dup := seen[p.Model]; dup {
				add(path+".model", "model %q is priced twice (also prices[%d])", p.Model, j)
			}
			seen[p.Model] = i
		}
		base := p.Base()
		base.validate(path, add)
		switch {
		case p.LongAbove < 0:
			add(path+".long_above", "must not be negative, got %d", p.LongAbove)
		case p.LongAbove > 0 && p.Long == nil:
			add(path+".long", "long_above is set: give the rates above it (long: {input: ..., output: ...})")
		case p.LongAbove == 0 && p.Long != nil:
			add(path+".long_above", "long rates are set: give the prompt size in tokens above which they apply")
		}
		if p.Long != nil {
			p.Long.validate(path+".long", add)
		}
	}
}

func (r *PriceRates) validate(path string, add func(string, string, ...any)) {
	if r.Input == nil {
		add(path+".input", "missing input price (dollars per million tokens)")
	}
	if r.Output == nil {
		add(path+".output", "missing output price (dollars per million tokens)")
	}
	for _, f := range []struct {
		name string
		v    *USD
	}{{"input", r.Input}, {"output", r.Output}, {"cache_read", r.CacheRead}, {"cache_write", r.CacheWrite}, {"cache_write_1h", r.CacheWrite1h}, {"reasoning", r.Reasoning}} {
		if f.v != nil && *f.v > maxRate {
			add(path+"."+f.name, "%s per million tokens is over the most a price may be, %s", *f.v, maxRate)
		}
	}
}

// Base is p's rates below LongAbove (all of them without it).
func (p *Price) Base() PriceRates {
	return PriceRates{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite, CacheWrite1h: p.CacheWrite1h, Reasoning: p.Reasoning}
}

// Rates returns r with its defaults filled in, in micro-dollars per
// million tokens: input, output, cache read, cache write, one-hour cache
// write, reasoning.
func (r *PriceRates) Rates() [6]int64 {
	get := func(v *USD, def int64) int64 {
		if v == nil {
			return def
		}
		return v.Micros()
	}
	in, out := get(r.Input, 0), get(r.Output, 0)
	write := get(r.CacheWrite, in)
	return [6]int64{in, out, get(r.CacheRead, in), write, get(r.CacheWrite1h, write), get(r.Reasoning, out)}
}
