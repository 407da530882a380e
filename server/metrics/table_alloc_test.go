//go:build !race

package metrics

import "testing"

// TestSideTableAllocs: counting a guardrail match or an account's request
// once its series exist allocates nothing.
func TestSideTableAllocs(t *testing.T) {
	m := New()
	m.Guardrail("aws_access_key_id", "redact")
	m.AccountRequest("work", 200)
	if n := testing.AllocsPerRun(100, func() {
		m.Guardrail("aws_access_key_id", "redact")
		m.AccountRequest("work", 200)
	}); n != 0 {
		t.Fatalf("%v allocations per count", n)
	}
}
