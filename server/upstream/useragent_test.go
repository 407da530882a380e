package upstream

import (
	"strings"
	"testing"
)

func TestAppendUserAgent(t *testing.T) {
	f := func(client, want string) {
		t.Helper()
		var c []byte
		if client != "<nil>" {
			c = []byte(client)
		}
		got := string(AppendUserAgent([]byte("x"), "1.2.3", c))
		if got != "x"+want {
			t.Fatalf("AppendUserAgent(%q)\n got %q\nwant %q", client, got, "x"+want)
		}
	}
	f("<nil>", "slipstream/1.2.3")
	f("", "slipstream/1.2.3")
	f(" \t\r\n", "slipstream/1.2.3")
	f("claude-cli/2.1.197 (external, cli)", "slipstream/1.2.3 (claude-cli/2.1.197 (external, cli))")
	f("  my-client/1.0  ", "slipstream/1.2.3 (my-client/1.0)")
	// Nothing that could end the header line or the comment survives.
	f("a\r\nX-Evil: 1", "slipstream/1.2.3 (a X-Evil: 1)")
	f("a\x00\x7f\tb", "slipstream/1.2.3 (a b)")
	f("café/1 é", "slipstream/1.2.3 (caf /1)")
	f("é", "slipstream/1.2.3")
	f(`a) b\ c`, `slipstream/1.2.3 (a\) b\\ c)`)
	f("a (b (c", "slipstream/1.2.3 (a (b (c)))")
	f("a ((b) c", "slipstream/1.2.3 (a ((b) c))")
	long := strings.Repeat("y", MaxClientAgent+10)
	f(long, "slipstream/1.2.3 ("+long[:MaxClientAgent]+")")
	f("("+long, "slipstream/1.2.3 (("+long[:MaxClientAgent-1]+"))")
}
