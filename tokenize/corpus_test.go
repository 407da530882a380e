package tokenize

import (
	"bytes"
	"testing"

	"slipstream/tokenize/corpus"
)

// corpusFiles returns the committed exactness corpus, name -> contents.
func corpusFiles(tb testing.TB) corpus.Files {
	tb.Helper()
	files, err := corpus.Read("testdata/corpus")
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func TestCorpusExact(t *testing.T) {
	for name, text := range corpusFiles(t) {
		for _, e := range []*Encoding{O200k(), Cl100k()} {
			t.Run(name+"/"+e.Name(), func(t *testing.T) {
				checkExact(t, e, text)
			})
		}
	}
}

// runChars are the characters repeated by TestRunsExact: letters of each
// case class, digits, punctuation, each kind of whitespace, multi-byte runes.
var runChars = []string{
	"a", "A", " ", "\n", "\t", "\r\n", ".", "0", "'", "/", "é", "É", "中", "ア", "😀",
	"\u00a0", "\u3000", "\u0301", "ab", "Ab",
}

func TestRunsExact(t *testing.T) {
	lengths := []int{1, 2, 3, 4, 5, 7, 16, 17, 100, 1000}
	long := []int{4096, 16 << 10}
	if testing.Short() {
		long = nil
	}
	for _, c := range runChars {
		for _, n := range append(lengths, long...) {
			run := bytes.Repeat([]byte(c), max(1, n/len(c)))
			for _, text := range [][]byte{run, append(append([]byte("x"), run...), 'x')} {
				checkExact(t, O200k(), text)
				checkExact(t, Cl100k(), text)
			}
		}
	}
}

// TestBenchInputsExact: the 1 MB inputs of BenchmarkCount (and of
// tokenize/compare/bench.mjs) give tiktoken's ids, so the speeds compared
// there are for the same answer.
func TestBenchInputsExact(t *testing.T) {
	for _, in := range []struct {
		name string
		text []byte
	}{{"mix1MB", mixText(t, 1<<20)}, {"all1MB", allText(t, 1<<20)}} {
		for _, e := range []*Encoding{O200k(), Cl100k()} {
			checkExact(t, e, in.text)
			t.Logf("%s %s: %d tokens", e.Name(), in.name, e.Count(in.text))
		}
	}
}
