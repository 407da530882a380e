package server

import (
	"testing"
	"time"

	"slipstream/codec"
	"slipstream/internal/testkit"
	"slipstream/server/config"
	"slipstream/server/provider"
)

// routingConfig has limited keys (one clear, one digest) and a pool of
// three credentials with affinity, in front of a pattern.
const routingConfig = `
keys:
  - {name: a, key: sk-client-a, models: ["claude-*"], rpm: 1099511627776, tpm: 1099511627776, budget: 1125899906842624}
  - {name: b, key_sha256: 0000000000000000000000000000000000000000000000000000000000000000}
providers:
  - {name: anth, kind: anthropic, affinity: true, keys: [k1, {key: k2, name: second}, k3], models: ["claude-*"]}
  - {name: chat, kind: openai, strategy: weighted, keys: [{key: k4, weight: 3}, k5], models: ["gpt-*"]}
`

// routeOnce is the routing decision of one request: find the key, check
// its model and limits, resolve the model, pick a credential.
func routeOnce(s *Server, presented []byte, model string, session uint64, now time.Time) *provider.Credential {
	k := s.keys.Find(presented)
	if !k.Allows(model) {
		return nil
	}
	if r, _ := s.keys.Admit(k, now); r != 0 {
		return nil
	}
	t, ok := s.reg.Resolve(model, codec.DialectAnthropic)
	if !ok {
		return nil
	}
	c, _ := t.Provider.Pick(provider.HashString(t.Model), session, 0, now.UnixNano())
	return c
}

func routingServer(t testing.TB) *Server {
	cfg, err := config.Parse([]byte(routingConfig), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoutingDecision(t *testing.T) {
	t.Parallel()
	s := routingServer(t)
	now := time.Now()
	if c := routeOnce(s, []byte("sk-client-a"), "claude-sonnet-5", 0, now); c == nil {
		t.Fatal("no credential")
	}
	if c := routeOnce(s, []byte("sk-client-a"), "gpt-5", 0, now); c != nil {
		t.Fatal("a disallowed model was routed")
	}
}
