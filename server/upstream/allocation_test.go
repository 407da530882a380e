//go:build !race

package upstream

import "testing"

// TestUserAgentAllocs: a translated request's User-Agent is built into a
// reused buffer.
func TestUserAgentAllocs(t *testing.T) {
	buf := make([]byte, 0, 512)
	client := []byte("claude-cli/2.1.197 (external, cli)")
	if n := testing.AllocsPerRun(100, func() { buf = AppendUserAgent(buf[:0], "1.2.3", client) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
