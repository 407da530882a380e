package server

import (
	"strings"
	"testing"

	"slipstream/codec"
)

func TestAppendForwardedQuery(t *testing.T) {
	t.Parallel()
	f := func(d codec.Dialect, q, want string) {
		t.Helper()
		if got := string(appendForwardedQuery([]byte("/v1/messages"), []byte(q), d)); got != "/v1/messages"+want {
			t.Fatalf("%q: got %q, want %q", q, got, "/v1/messages"+want)
		}
	}
	a := codec.DialectAnthropic
	f(a, "beta=true", "?beta=true")
	f(a, "key=sk-1&beta=true&x=1", "?beta=true")
	f(a, "beta=", "?beta=")
	f(a, "beta", "?beta=")
	f(a, "beta=a+b", "?beta=a+b")
	f(a, "beta=%0d%0aHost:%20evil", "?beta=%0D%0AHost%3A+evil")
	f(a, "beta=%zz", "")                       // a malformed escape is dropped
	f(a, "beta=%2", "")                        // so is a cut one
	f(a, "beta="+strings.Repeat("x", 100), "") // and a value no flag has
	f(a, "Beta=true&BETA=1", "")               // names are case-sensitive
	f(a, "beta=true&beta=false", "?beta=true&beta=false")
	f(a, "&&=&beta=true&", "?beta=true")
	f(codec.DialectChat, "beta=true", "")
	f(codec.DialectResponses, "beta=true&api-version=1", "")
	f(codec.DialectGemini, "beta=true", "")
}
