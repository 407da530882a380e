package config

import (
	"errors"
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

func TestPricesAndBudgetUSD(t *testing.T) {
	yml := `keys:
  - {name: a, key: sk-a, budget_usd: 25.5}
  - {name: b, key: sk-b, budget_usd: 100, period: monthly}
providers:
  - {name: m, kind: mock, models: [x]}
prices:
  - {model: "my-*", input: 1.25, output: 10}
  - model: exact
    input: 0.000001
    output: 2
    cache_read: 0
    cache_write: 3.75
    long_above: 200000
    long: {input: 2.5, output: 15, reasoning: 20}
`
	c, err := Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if c.Keys[0].BudgetUSD != 25_500_000 || c.Keys[0].Period != PeriodDaily || c.Keys[1].BudgetUSD != 100e6 || c.Keys[1].Period != PeriodMonthly {
		t.Fatalf("keys: %+v", c.Keys)
	}
	f := func(r *PriceRates, want [6]int64) {
		t.Helper()
		if got := r.Rates(); got != want {
			t.Fatalf("rates %v, want %v", got, want)
		}
	}
	b := c.Prices[0].Base()
	f(&b, [6]int64{1_250_000, 10e6, 1_250_000, 1_250_000, 1_250_000, 10e6}) // defaults: input, output
	b = c.Prices[1].Base()
	f(&b, [6]int64{1, 2e6, 0, 3_750_000, 3_750_000, 2e6}) // an explicit 0 stays 0
	f(c.Prices[1].Long, [6]int64{2_500_000, 15e6, 2_500_000, 2_500_000, 2_500_000, 20e6})
	if c.Prices[1].LongAbove != 200000 {
		t.Fatalf("long_above %d", c.Prices[1].LongAbove)
	}
	out, err := c.MarshalRedacted()
	if err != nil || !strings.Contains(string(out), "budget_usd: 25.5") || !strings.Contains(string(out), "input: 0.000001") {
		t.Fatalf("check -print: %v\n%s", err, out)
	}
}

func TestPricesProblemsWithLines(t *testing.T) {
	f := func(yml string, want ...string) {
		t.Helper()
		_, err := Parse([]byte(yml), testkit.Env())
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("want Problems, got %v", err)
		}
		got := ps.Error()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Fatalf("problems\n%s\nlack %q", got, w)
			}
		}
		if len(ps) != len(want) {
			t.Fatalf("want %d problems, got %d:\n%s", len(want), len(ps), got)
		}
	}
	const mock = "providers:\n  - {name: m, kind: mock, models: [x]}\n"
	f(mock+"prices:\n  - {model: a, input: 1}\n  - {input: 1, output: 2}\n  - {model: a, input: 1, output: -2}\n",
		"line 4: prices[0].output: missing output price",
		"line 5: prices[1].model: missing model",
		"line 6: prices[2].output: want an amount in dollars",
		"line 6: prices[2].model: model \"a\" is priced twice (also prices[0])")
	f(mock+"prices:\n  - model: b\n    input: 0.0000001\n    output: lots\n    long_above: 1000\n",
		"line 5: prices[0].input: at most 6 decimals",
		"line 6: prices[0].output: want an amount in dollars",
		"line 4: prices[0].long: long_above is set")
	f(mock+"prices:\n  - {model: c, input: 1, output: 2, long: {input: 1}}\n",
		"line 4: prices[0].long_above: long rates are set",
		"line 4: prices[0].long.output: missing output price")
	f(mock+"prices:\n  - {model: d, input: 200000, output: 1, cache_red: 1}\n",
		"line 4: prices[0].input: 200000 per million tokens is over",
		"line 4: prices[0].cache_red: unknown field (did you mean cache_read?)")
	f(mock+"keys:\n  - {name: k, key: sk-k, budget_usd: -5}\n  - {name: j, key: sk-j, budget_usd: ten}\n",
		"line 4: keys[0].budget_usd: want an amount in dollars",
		"line 5: keys[1].budget_usd: want an amount in dollars")
}
