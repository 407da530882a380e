package config

import (
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

func TestValidateFront(t *testing.T) {
	const mock = "providers:\n  - {name: m, kind: mock, models: [x]}\n"
	f := func(yml string, want ...string) {
		t.Helper()
		_, err := Parse([]byte(yml+mock), testkit.Env("K", "v"))
		if len(want) == 0 {
			if err != nil {
				t.Fatalf("%q: %v", yml, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%q: no problem, want %q", yml, want)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%q: %v\nlacks %q", yml, err, w)
			}
		}
	}
	f("allowed_hosts: [proxy.internal, \"*.corp.example\", \"*\"]\ncors: {allowed_origins: [\"http://localhost:3000\", \"https://app.example\", \"*\"], max_age: 60}\nforward_headers: [X-Team, \"X-Trace-*\"]\n")
	f("allowed_hosts: [\"proxy.internal:8317\", \"\", \"a.*.b\", \"http://x\"]\n",
		"allowed_hosts[0]", "allowed_hosts[1]", "allowed_hosts[2]", "allowed_hosts[3]")
	f("cors: {allowed_origins: [\"localhost:3000\", \"http://x/path\", \"http://\"], max_age: -1}\n",
		"cors.allowed_origins[0]", "cors.allowed_origins[1]", "cors.allowed_origins[2]", "cors.max_age")
	f("forward_headers: [\"X Foo\", \"*\", \"\"]\n", "forward_headers[0]", "forward_headers[1]", "forward_headers[2]")
}
