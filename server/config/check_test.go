package config

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

// TestCheckEveryProblemWithPathAndLine: each case lists every problem
// line the file must produce, in one run.
func TestCheckEveryProblemWithPathAndLine(t *testing.T) {
	f := func(yml string, want ...string) {
		t.Helper()
		_, err := Parse([]byte(yml), testkit.Env("K", "v"))
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
		for _, bad := range []string{"cannot unmarshal", "!!str", "int64", "yaml:"} {
			if strings.Contains(got, bad) {
				t.Fatalf("raw decoder wording %q in\n%s", bad, got)
			}
		}
	}
	const mock = "providers:\n  - {name: m, kind: mock, models: [x]}\n"
	// Durations: a bad one does not hide the others.
	f("timeouts:\n  connect: 5 minutes\n  idle: -1s\n  first_byte: soon\n"+mock,
		`line 2: timeouts.connect: cannot parse duration "5 minutes"`,
		"line 3: timeouts.idle: must not be negative",
		`line 4: timeouts.first_byte: cannot parse duration "soon"`)
	// Type errors, reworded.
	f("limits:\n  max_concurrent: lots\n  max_body_bytes: 64 bananas\n  gc_percent: [1]\n"+mock,
		`line 2: limits.max_concurrent: want a whole number, got "lots"`,
		`line 3: limits.max_body_bytes: cannot parse size "64 bananas"`,
		"line 4: limits.gc_percent: want a whole number, got a list")
	f("log:\n  access: sometimes\n"+mock, `line 2: log.access: want true or false, got "sometimes"`)
	f("keys: sk-1\n"+mock, `line 1: keys: want a list, got "sk-1" (a list of one is written [sk-1])`)
	// An indentation slip is reported at its own line, not the block's.
	f("providers:\n  - name: m\n    kind: mock\n    models: [x]\n   reply: hi\n", "line 5: (syntax): did not find expected '-' indicator")
	f("limits:\n  max_concurrent: 1\n gc_percent: 2\n"+mock, "line 3: (syntax): did not find expected key")
	// Ports, negatives.
	f("listen: 127.0.0.1:99999\n"+mock, `line 1: listen: port "99999" is not a number from 0 to 65535`)
	f("listen: localhost\n"+mock, `line 1: listen: want host:port, got "localhost"`)
	f("timeouts: {connect: -1s, keepalive: -2s, shutdown: -5m}\n"+mock,
		"line 1: timeouts.connect: must not be negative", "line 1: timeouts.keepalive: must not be negative", "line 1: timeouts.shutdown: must not be negative")
	f("providers:\n  - name: m\n    kind: mock\n    models: [x]\n    chunks: -3\n    chunk_delay: -1s\n",
		"line 5: providers[0].chunks: must not be negative", "line 6: providers[0].chunk_delay: must not be negative")
	f("limits:\n  max_bytes_in_flight: -1\n  max_concurrent: -2\n"+mock,
		"line 2: limits.max_bytes_in_flight: must not be negative", "line 3: limits.max_concurrent: must not be negative")
	// Every limit and timeout, including ones added later, is covered.
	f("limits: {ws_connections: -1, ws_state_bytes: -1KiB}\ntimeouts: {write: -1s, header_read: -2s, ws_ping: -3s}\n"+mock,
		"line 1: limits.ws_connections: must not be negative", "line 1: limits.ws_state_bytes: must not be negative",
		"line 2: timeouts.write: must not be negative", "line 2: timeouts.header_read: must not be negative", "line 2: timeouts.ws_ping: must not be negative")
	// Empty and whitespace keys, in client keys, provider keys and names.
	f("keys:\n  - {name: a, key: \"   \"}\n  - {name: b, key: \" sk-2\"}\n  - {name: c, key: \"\"}\n"+mock,
		"line 2: keys[0].key: empty key", "line 3: keys[1].key: the key has spaces", "line 4: keys[2].key: empty key")
	f("providers:\n  - name: o\n    kind: openai\n    keys: [\"\\t\"]\n    models: [\" \"]\n",
		"line 4: providers[0].keys[0]: empty key", "line 5: providers[0].models[0]: empty model pattern")
	f("aliases:\n  \" \": m/x\n"+mock, "line 2: aliases: empty key")
	// URLs with a query or fragment, or credentials.
	f("providers:\n  - name: o\n    kind: openai\n    keys: [k]\n    base_url: https://x.example/v1?a=1#f\n    models: [x]\n",
		"line 5: providers[0].base_url: must not have a query (?) or fragment (#)")
	f("providers:\n  - name: o\n    kind: openai\n    keys: [k]\n    base_url: https://u:p@x.example/v1\n    models: [x]\n",
		"line 5: providers[0].base_url: must not hold credentials")
	f("providers:\n  - name: o\n    kind: openai\n    keys: [k]\n    base_url: x.example/v1\n    models: [x]\n",
		`line 5: providers[0].base_url: want an http(s) URL, got "x.example/v1"`)
	// Unknown fields, with a suggestion.
	f("limits:\n  max_concurent: 3\n"+mock, "line 2: limits.max_concurent: unknown field (did you mean max_concurrent?)")
	f("provider:\n  - {name: m, kind: mock, models: [x]}\n", "line 1: provider: unknown field (did you mean providers?)", "providers: no providers")
	// Duplicate names and keys.
	f("keys:\n  - {name: a, key: k1}\n  - {name: a, key: k2}\n  - {name: b, key: k1}\n"+mock,
		`line 3: keys[1].name: duplicate key name "a"`, "line 4: keys[2].key: the same key is listed twice")
	f("providers:\n  - {name: m, kind: mock, models: [x]}\n  - {name: m, kind: mock, models: [y]}\n",
		`line 3: providers[1].name: duplicate provider name "m"`)
	f("listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n"+mock, "line 2: listen: set twice (first on line 1)")
	f("aliases:\n  fast: m/x\n  fast: m/y\n"+mock, "line 3: aliases.fast: set twice (first on line 2)")
	// A dotted alias name still gets its line.
	f(mock+"aliases:\n  gpt-4.1: nobody/x\n", `line 4: aliases.gpt-4.1: no provider named "nobody"`)
	// TLS needs both files, and files that load.
	f("tls: {cert_file: /nonexistent/c.pem}\n"+mock, "line 1: tls.key_file: missing")
	f("tls: {cert_file: /nonexistent/c.pem, key_file: /nonexistent/k.pem}\n"+mock, "line 1: tls.cert_file: cannot load the certificate and key")
}

// TestProblemsNeverQuoteSecrets: a key in the wrong shape is reported
// without its value (check's output may end up in a log).
func TestProblemsNeverQuoteSecrets(t *testing.T) {
	f := func(yml, want string) {
		t.Helper()
		_, err := Parse([]byte(yml), testkit.Env())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want %q in %v", want, err)
		}
		if strings.Contains(err.Error(), "sk-secret") {
			t.Fatalf("a secret in a problem: %v", err)
		}
	}
	const mock = "  - {name: m, kind: mock, models: [x]}\n"
	f("keys:\n  - {name: a, key: {x: sk-secret-1}}\nproviders:\n"+mock, "line 2: keys[0].key: want a string, got a mapping")
	f("providers:\n  - {name: o, kind: openai, keys: sk-secret-2, models: [x]}\n", "line 2: providers[0].keys: want a list, got (a value not shown")
	f("providers:\n  - {name: o, kind: openai, keys: [[sk-secret-3]], models: [x]}\n", "line 2: providers[0].keys[0]: want a string or a mapping {key, name, weight}, got a list")
}

func TestParseSize(t *testing.T) {
	f := func(in string, want Size) {
		t.Helper()
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Fatalf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	f("0", 0)
	f("67108864", 64<<20)
	f("64MiB", 64<<20)
	f("64mib", 64<<20)
	f("64 MiB", 64<<20)
	f("512KB", 512000)
	f("512KiB", 512<<10)
	f("1.5GiB", 3<<29)
	f("2GB", 2e9)
	f("10B", 10)
	f("1_000", 1000)
	bad := func(in string) {
		t.Helper()
		if v, err := ParseSize(in); err == nil {
			t.Fatalf("ParseSize(%q) = %d, want an error", in, v)
		}
	}
	bad("")
	bad("64 bananas")
	bad("MiB")
	bad("1e3KB")
	bad("NaNMiB")
	bad("99999999999TiB")
	s := func(v Size, want string) {
		t.Helper()
		if v.String() != want {
			t.Fatalf("Size(%d).String() = %q, want %q", int64(v), v.String(), want)
		}
	}
	s(64<<20, "64MiB")
	s(512000, "500KiB")
	s(1000, "1000")
	s(0, "0")
	s(3<<29, "1536MiB")
}

func TestSizesInConfig(t *testing.T) {
	c, err := Parse([]byte("limits: {max_body_bytes: 8MiB, max_bytes_in_flight: 512KB}\nproviders:\n  - {name: m, kind: mock, models: [x]}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxBodyBytes != 8<<20 || c.Limits.MaxBytesInFlight != 512000 {
		t.Fatalf("limits %+v", c.Limits)
	}
}

// TestBytesInFlightDerivedFromMemoryLimit: with GOMEMLIMIT set (here
// through debug.SetMemoryLimit, which is what the runtime reads it into)
// and no max_bytes_in_flight, the cap is a quarter of the limit; an
// explicit value wins.
func TestBytesInFlightDerivedFromMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(256 << 20)
	defer debug.SetMemoryLimit(old)
	yml := "providers:\n  - {name: m, kind: mock, models: [x]}\n"
	c, err := Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxBytesInFlight != 64<<20 {
		t.Fatalf("derived max_bytes_in_flight = %v, want 64MiB", c.Limits.MaxBytesInFlight)
	}
	c, err = Parse([]byte(yml+"limits: {max_bytes_in_flight: 1MiB}\n"), testkit.Env())
	if err != nil || c.Limits.MaxBytesInFlight != 1<<20 {
		t.Fatalf("explicit max_bytes_in_flight = %v, %v", c.Limits.MaxBytesInFlight, err)
	}
	if DerivedBytesInFlight(0) != 0 {
		t.Fatal("no memory limit must mean no cap")
	}
}

func TestMarshalRedacted(t *testing.T) {
	yml := "listen: 127.0.0.1:9\nkeys:\n  - {name: laptop, key: \"${SLIP}\"}\nproviders:\n  - name: o\n    kind: openai\n    keys: [\"sk-upstream-secret\"]\n    models: [\"gpt-*\"]\n  - {name: m, kind: mock, models: [\"mock*\"]}\naliases: {fast: o/gpt-5-mini}\n"
	c, err := Parse([]byte(yml), testkit.Env("SLIP", "sk-client-secret"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.MarshalRedacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"sk-client-secret", "sk-upstream-secret"} {
		if strings.Contains(s, secret) {
			t.Fatalf("secret %q printed:\n%s", secret, s)
		}
	}
	for _, want := range []string{"name: laptop", "key: REDACTED", "- key: REDACTED", "base_url: https://api.openai.com/v1", "api: chat", "max_body_bytes: 64MiB", "connect: 10s", "keepalive: 15s", "fast: o/gpt-5-mini", "reply: Hello from the slipstream mock provider."} {
		if !strings.Contains(s, want) {
			t.Fatalf("printed config lacks %q:\n%s", want, s)
		}
	}
	// What is printed parses back to the same effective configuration.
	back, err := Parse(out, testkit.Env())
	if err != nil {
		t.Fatalf("printed config does not parse: %v\n%s", err, s)
	}
	if back.Listen != c.Listen || back.Providers[0].BaseURL != c.Providers[0].BaseURL || back.Limits != c.Limits {
		t.Fatalf("round trip changed the config:\n%s", s)
	}
}

func TestProviderKeyForms(t *testing.T) {
	yml := "providers:\n  - name: o\n    kind: openai\n    strategy: weighted\n    keys:\n      - sk-plain-one\n      - {key: sk-object-two, name: team, weight: 3}\n    models: [\"*\"]\nkeys:\n  - {name: ci, key_sha256: " + strings.Repeat("ab", 32) + ", rpm: 5, tpm: 1000, budget: 100000, period: monthly}\n"
	c, err := Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	k := c.Providers[0].Keys
	if len(k) != 2 || k[0].Key != "sk-plain-one" || k[0].Name != "key#0" || k[0].Weight != 1 || k[1].Key != "sk-object-two" || k[1].Name != "team" || k[1].Weight != 3 {
		t.Fatalf("keys = %+v", k)
	}
	if c.Keys[0].RPM != 5 || c.Keys[0].Period != PeriodMonthly {
		t.Fatalf("client key = %+v", c.Keys[0])
	}
	out, err := c.MarshalRedacted()
	if err != nil || strings.Contains(string(out), "sk-") || !strings.Contains(string(out), "name: team") {
		t.Fatalf("redacted print:\n%s", out)
	}
	bad := "providers:\n  - name: o\n    kind: openai\n    strategy: random\n    keys: [{key: a, nam: x}]\n    models: [\"*\"]\nfallbacks: {m: [nowhere/x, o]}\nkeys:\n  - {name: ci, key: a, key_sha256: zz}\n"
	_, err = Parse([]byte(bad), testkit.Env())
	for _, want := range []string{"strategy", "keys[0].nam", "nowhere", "want provider/model", "key_sha256"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v lacks %q", err, want)
		}
	}
}
