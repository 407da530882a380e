package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/pgtest"
	"slipstream/internal/testkit"
	"slipstream/server/config"
	"slipstream/server/ledger"
)

// usageRecords is a scripted set of records over two UTC days.
func usageRecords() []ledger.Record {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	r := func(h int, key, provider, model string, status int32, in, out, cost int64, priced bool) ledger.Record {
		rec := ledger.Record{Start: day.Add(time.Duration(h) * time.Hour).UnixMicro(), Key: key, Provider: provider,
			Status: status, Input: in, Output: out, CacheRead: in / 10, CostNanoUSD: cost, Priced: priced}
		rec.Model.Set([]byte(model))
		rec.UpstreamModel.Set([]byte(model))
		return rec
	}
	return []ledger.Record{
		r(1, "alice", "anthropic", "claude-sonnet-4-5", 200, 1000, 200, 6_000_000, true),
		r(2, "bob", "openai", "gpt-5", 200, 500, 50, 1_125_000, true),
		r(3, "bob", "openai", "gpt-5", 502, 0, 0, 0, false),
		r(26, "alice", "local", "llama-3", 200, 40, 4, 0, false),
	}
}

// writeUsageConfig writes a config whose ledger is database.
func writeUsageConfig(t *testing.T, database string) string {
	path := filepath.Join(t.TempDir(), "slipstream.yaml")
	cfg := "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\nusage: {database: \"" + database + "\"}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func fillLedger(t *testing.T, database string, rs []ledger.Record) {
	d, err := ledger.Open(context.Background(), database)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Insert(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

// TestUsageCommand: slipstream usage prints the scripted records' totals
// in each format and grouping, the same from SQLite and PostgreSQL.
func TestUsageCommand(t *testing.T) {
	sqlite := filepath.Join(t.TempDir(), "usage.db")
	fillLedger(t, sqlite, usageRecords())
	cfg := writeUsageConfig(t, sqlite)
	f := func(cfg string, args []string, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"usage", "-config", cfg}, args...), nil, &out, &errb); code != 0 {
			t.Fatalf("usage %v: exit %d: %s", args, code, errb.String())
		}
		if out.String() != want {
			t.Fatalf("usage %v:\n%s\nwant:\n%s", args, out.String(), want)
		}
	}
	byKeyCSV := "key,requests,errors,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,unpriced\n" +
		"alice,2,0,1040,204,104,0,0,0.006000,1\n" +
		"bob,2,1,500,50,50,0,0,0.001125,0\n"
	f(cfg, []string{"-by", "key", "-format", "csv"}, byKeyCSV)
	f(cfg, []string{"-by", "day", "-format", "csv"}, "day,requests,errors,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,unpriced\n"+
		"2026-11-30,3,1,1500,250,150,0,0,0.007125,0\n"+
		"2026-12-01,1,0,40,4,4,0,0,0.000000,1\n")
	f(cfg, []string{"-by", "model", "-format", "csv", "-from", "2026-11-30", "-to", "2026-11-30"}, "model,requests,errors,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,unpriced\n"+
		"claude-sonnet-4-5,1,0,1000,200,100,0,0,0.006000,0\n"+
		"gpt-5,2,1,500,50,50,0,0,0.001125,0\n")
	f(cfg, []string{"-by", "provider", "-from", "2026-11-30T02:00:00Z"},
		"  PROVIDER  REQUESTS  ERRORS  INPUT_TOKENS  OUTPUT_TOKENS  CACHE_READ_TOKENS  CACHE_WRITE_TOKENS  REASONING_TOKENS  COST_USD  UNPRICED\n"+
			"     local         1       0            40              4                  4                   0                 0  0.000000         1\n"+
			"    openai         2       1           500             50                 50                   0                 0  0.001125         0\n"+
			"     TOTAL         3       1           540             54                 54                   0                 0  0.001125         1\n")
	var out, errb bytes.Buffer
	if code := run([]string{"usage", "-config", cfg, "-by", "key", "-format", "json", "-to", "2026-11-30"}, nil, &out, &errb); code != 0 {
		t.Fatalf("json: %d %s", code, errb.String())
	}
	var got struct {
		By     string
		From   *time.Time
		To     time.Time
		Totals []struct {
			Group       string `json:"group"`
			Requests    int64  `json:"requests"`
			Input       int64  `json:"input_tokens"`
			CostNanoUSD int64  `json:"cost_nano_usd"`
			CostUSD     string `json:"cost_usd"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.By != "key" || got.From != nil || !got.To.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || len(got.Totals) != 2 ||
		got.Totals[0].Group != "alice" || got.Totals[0].Requests != 1 || got.Totals[0].Input != 1000 || got.Totals[0].CostNanoUSD != 6_000_000 || got.Totals[0].CostUSD != "0.006000" ||
		got.Totals[1].Group != "bob" || got.Totals[1].Requests != 2 {
		t.Fatalf("json: %s", out.String())
	}
	// The same records in PostgreSQL read the same.
	pg := pgtest.Start(t)
	fillLedger(t, pg.URL(), usageRecords())
	f(writeUsageConfig(t, pg.URL()), []string{"-by", "key", "-format", "csv"}, byKeyCSV)

	// Usage errors.
	bad := func(args []string, code int, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		if got := run(append([]string{"usage", "-config", cfg}, args...), nil, &out, &errb); got != code || !strings.Contains(errb.String(), want) {
			t.Fatalf("%v: exit %d, %q", args, got, errb.String())
		}
	}
	bad([]string{"-by", "colour"}, 2, `cannot group usage by "colour"`)
	bad([]string{"-format", "xml"}, 2, `unknown format "xml"`)
	bad([]string{"-from", "yesterday"}, 2, `cannot parse date "yesterday"`)
	bad([]string{"-from", "2026-12-02", "-to", "2026-12-01"}, 2, "-to is not after -from")
	missing := writeUsageConfig(t, filepath.Join(t.TempDir(), "none.db"))
	var merr bytes.Buffer
	if code := run([]string{"usage", "-config", missing}, nil, io.Discard, &merr); code != 1 || !strings.Contains(merr.String(), "no usage ledger at") {
		t.Fatalf("missing ledger: %d %q", code, merr.String())
	}
}

// TestUsageAfterServe: slipstream serves scripted requests from two keys,
// stops on SIGTERM (writing what its ledger holds), and slipstream usage
// then reports exactly those requests and the tokens their answers
// reported.
func TestUsageAfterServe(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger", "usage.db")
	addr := testkit.FreeAddr(t)
	path := filepath.Join(dir, "slipstream.yaml")
	os.WriteFile(path, []byte("keys:\n  - {name: alice, key: sk-alice-0123456789}\n  - {name: bob, key: sk-bob-0123456789}\n"+
		"providers:\n  - {name: m, kind: mock, models: [\"*\"]}\nusage: {database: \""+db+"\"}\n"), 0o600)
	p := startMain(t, "-config", path, "-listen", addr)
	p.waitFor(t, "listening on ")
	if !strings.Contains(p.out.String(), "usage ledger: "+db) {
		t.Fatalf("no ledger line in:\n%s", p.out.String())
	}
	type tally struct{ requests, in, out int64 }
	want := map[string]*tally{"alice": {}, "bob": {}}
	for i := range 7 {
		key := []string{"alice", "bob"}[i%3/2]
		body := `{"model":"mock-` + key + `","max_tokens":20,"messages":[{"role":"user","content":"count to ` + strings.Repeat("ten ", i+1) + `"}]}`
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
		req.Header.Set("x-api-key", "sk-"+key+"-0123456789")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ans struct {
			Usage struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ans)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %v", i, resp.StatusCode, err)
		}
		w := want[key]
		w.requests++
		w.in += ans.Usage.In
		w.out += ans.Usage.Out
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"usage", "-config", path, "-by", "key", "-format", "json"}, nil, &out, &errb); code != 0 {
		t.Fatalf("usage: %d %s", code, errb.String())
	}
	var got struct {
		Totals []ledger.Total
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Totals) != 2 {
		t.Fatalf("totals: %s", out.String())
	}
	for _, tot := range got.Totals {
		w := want[tot.Group]
		if w == nil || tot.Requests != w.requests || tot.Input != w.in || tot.Output != w.out || w.in == 0 || tot.Errors != 0 {
			t.Fatalf("%s: %+v, want %+v", tot.Group, tot, w)
		}
	}
}

// TestLedgerPlace: serve's default ledger is in the state directory; with
// none (a systemd DynamicUser's HOME is /), the ledger is off with a
// warning rather than stopping the start.
func TestLedgerPlace(t *testing.T) {
	cfg, err := config.Parse([]byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("STATE_DIRECTORY", "")
	t.Setenv("XDG_STATE_HOME", "/s")
	var w bytes.Buffer
	if got := ledgerPlace(cfg, &w); got != "/s/slipstream/usage.db" || w.Len() != 0 {
		t.Fatalf("XDG_STATE_HOME: %q %q", got, w.String())
	}
	t.Setenv("STATE_DIRECTORY", "/var/lib/slipstream")
	if got := ledgerPlace(cfg, &w); got != "/var/lib/slipstream/usage.db" {
		t.Fatalf("STATE_DIRECTORY: %q", got)
	}
	t.Setenv("STATE_DIRECTORY", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/")
	if got := ledgerPlace(cfg, &w); got != "" || !strings.Contains(w.String(), "warning: usage ledger off") {
		t.Fatalf("no state directory: %q %q", got, w.String())
	}
}
