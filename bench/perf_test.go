package bench

import (
	"reflect"
	"testing"
)

func TestTopSymbols(t *testing.T) {
	rep := []byte(`# Samples: 39K of event 'cpu-clock'
#
    73.81%  [.] github.com/tidwall/gjson.validstring   -   -
     4.58%  [k] _copy_from_iter                        -   -
     1.80%  [.] runtime.memmove                        -   -
`)
	f := func(n int, want []string) {
		t.Helper()
		if got := topSymbols(rep, n); !reflect.DeepEqual(got, want) {
			t.Fatalf("topSymbols(%d) = %q, want %q", n, got, want)
		}
	}
	f(2, []string{"gjson.validstring 73.8%", "_copy_from_iter 4.6%"})
	f(5, []string{"gjson.validstring 73.8%", "_copy_from_iter 4.6%", "runtime.memmove 1.8%"})
	f(0, nil)
}
