package tokenize

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// TestTableMatchesLoader keeps the committed blobs honest: every token of
// the loader's rank file is in the table with the same rank, and nothing
// else is.
func TestTableMatchesLoader(t *testing.T) {
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		src, err := assets.Assets.ReadFile(e.Name() + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		tab := e.table()
		lines := bytes.Split(bytes.TrimSpace(src), []byte("\n"))
		if len(lines) != tab.size() {
			t.Fatalf("%s: loader has %d tokens, table %d", e.Name(), len(lines), tab.size())
		}
		for _, line := range lines {
			b64, rankText, _ := bytes.Cut(line, []byte(" "))
			tok, err := base64.StdEncoding.DecodeString(string(b64))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := strconv.Atoi(string(rankText))
			if r, ok := tab.lookup(tok); !ok || int(r) != want {
				t.Fatalf("%s: lookup(%q) = %d, %v; want %d", e.Name(), tok, r, ok, want)
			}
		}
	}
}

// TestOneTablePerEncoding: concurrent first use builds each table once and
// every caller shares it.
func TestOneTablePerEncoding(t *testing.T) {
	O200k().Count(nil)
	Cl100k().Count(nil)
	before := tableBuilds.Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, name := range []string{"o200k_base", "cl100k_base"} {
				e, err := Get(name)
				if err != nil {
					t.Error(err)
					return
				}
				e.Count([]byte("hello"))
				ForModel("gpt-4o").Count([]byte("hi"))
			}
		})
	}
	wg.Wait()
	if got := tableBuilds.Load(); got != before {
		t.Fatalf("tables built %d more times after first use", got-before)
	}
	if before > 2 {
		t.Fatalf("%d tables built, want at most one per encoding", before)
	}
	if a, b := O200k().table(), O200k().table(); a != b {
		t.Fatal("o200k table is not shared")
	}
}
