package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/pool"
	"slipstream/server/config"
	"slipstream/server/price"
)

// Spend in money. Every generation request that reached a provider has a
// cost: its usage (keyUsage: the upstream's counts, or what slipstream
// estimated for an answer cut short) at the prices of the model that
// served it, the upstream model after aliases and failover (x.upModel of
// the last attempt). A model with no price gives an unpriced cost, never
// a free one; a subscription account's answer costs its API equivalent,
// marked as such. The cost goes to the access log (cost_usd, cost_kind),
// /metrics (slipstream_cost_usd_total) and the key's budget_usd.

// newPriceTable builds the price table of cfg: its prices: entries over
// the built-in table.
func newPriceTable(cfg *config.Config) *price.Table {
	es := make([]price.Entry, 0, len(cfg.Prices))
	for i := range cfg.Prices {
		p := &cfg.Prices[i]
		e := price.Entry{Model: p.Model, Price: price.Price{Rates: rates(p.Base()), LongAbove: p.LongAbove}}
		if p.Long != nil {
			e.Price.Long = rates(*p.Long)
		}
		es = append(es, e)
	}
	return price.NewTable(es)
}

func rates(c config.PriceRates) price.Rates {
	r := c.Rates()
	return price.Rates{Input: price.Rate(r[0]), Output: price.Rate(r[1]), CacheRead: price.Rate(r[2]),
		CacheWrite: price.Rate(r[3]), CacheWrite1h: price.Rate(r[4]), Reasoning: price.Rate(r[5])}
}

// billable reports whether x has a cost: a generation request that was
// routed to a provider. Token counts, and requests refused before
// routing, cost nothing and are left out of the cost metrics.
func (x *exchange) billable() bool {
	return x.rt != nil && x.rt.op == opGenerate && x.target.Provider != nil
}

// cost is what x cost, for a billable x (an x that is not has no cost:
// its zero Cost means nothing). It allocates nothing.
func (x *exchange) cost() price.Cost {
	p, ok := x.s.prices.Lookup(pool.B2S(x.upModel))
	if !ok {
		return price.Cost{}
	}
	u := x.keyUsage()
	c := price.Cost{Pico: p.Of(&u), Kind: price.API}
	if pr := x.target.Provider; pr != nil && pr.IsAccount() {
		c.Kind = price.APIEquivalent
	}
	return c
}

// costNanos is what x charges its key's budget_usd, in nano-dollars: its
// cost, or, when the model that served it has no price (a fallback to an
// unpriced model), what it reserved at admission.
func (x *exchange) costNanos() int64 {
	if !x.key.HasBudgetUSD() || !x.billable() {
		return 0
	}
	if c := x.cost(); c.Priced() {
		return c.Nanos()
	}
	return x.reserved.Nanos()
}

// admissionPrice is the price of the model a request of a key with
// budget_usd will be served by first; a model without one is answered
// 403 (its cost could not be counted against the budget) and ok is false.
// An unknown model returns nil and ok: prepare answers it 404.
func (x *exchange) admissionPrice() (p *price.Price, ok bool) {
	t, found := x.s.reg.Resolve(pool.B2S(x.model), x.rt.dialect)
	if !found {
		return nil, true
	}
	up := pool.B2S(x.model)
	if t.Aliased {
		up = t.Model
	}
	if p, ok = x.s.prices.Lookup(up); ok {
		return p, true
	}
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusForbidden,
		"this API key has a money budget (budget_usd), and model "+clipString(pool.S2B(up))+
			" has no price, so its cost cannot be counted: use a priced model, or ask the operator to add it under prices:")
	return nil, false
}

// reserveNanos is the money a request reserves: n tokens of which
// x.inTokens are input, at p's input and output rates.
func (x *exchange) reserveNanos(p *price.Price, n int64) int64 {
	if p == nil {
		return 0
	}
	return price.PicoToNanos(p.Estimate(x.inTokens, max(n-x.inTokens, 0)))
}

// appendCost appends c's cost_usd for the access log and returns its
// cost_kind: the dollars and "api" or "api_equivalent"; nothing and
// "unpriced" for a model without a price; "0" and "none" for a request
// that has no cost (not routed, or a token count).
func (x *exchange) appendCost(dst []byte, c price.Cost) ([]byte, string) {
	switch {
	case !x.billable():
		return append(dst, '0'), "none"
	case !c.Priced():
		return dst, c.Kind.String()
	}
	return appendUSD(dst, c.Pico), c.Kind.String()
}

// appendUSD appends pico picodollars as a decimal number of dollars, to
// the picodollar, without trailing zeros ("0.0105", "12").
func appendUSD(dst []byte, pico int64) []byte {
	dst = fasthttp.AppendUint(dst, int(pico/1e12))
	frac := pico % 1e12
	if frac == 0 {
		return dst
	}
	dst = append(dst, '.')
	for d := int64(1e11); frac > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d))
		frac %= d
	}
	return dst
}
