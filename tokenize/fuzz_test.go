package tokenize

import (
	"testing"
)

// FuzzTokenize checks both encodings against tiktoken-go's EncodeOrdinary.
// The seeds (the corpus files, cut to fuzz-sized pieces, and the known
// traps) run under plain `go test`.
func FuzzTokenize(f *testing.F) {
	for _, seed := range []string{
		"", "\t\n\t\nx", " \n x", "I'M you'Re", "a\u0301B", "E\u0301COLE'S",
		"\u00a0\u00a0x", "\u3000 \u3000", "x  \r\n  y", "123456", "١٢٣٤", "\xff\xfe'S",
		"ǅungla Ǆ'LL", "ʰa ʰA Aʰ", "👨‍👩‍👧 🏳️‍🌈", "<|endoftext|>", "a/b\n/c", "})\n\n/",
	} {
		f.Add([]byte(seed))
	}
	for _, text := range corpusFiles(f) {
		for len(text) > 0 {
			n := min(len(text), 512)
			f.Add(text[:n])
			text = text[n:]
		}
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > 1024 {
			return // the oracle is quadratic on long pieces
		}
		checkExact(t, O200k(), text)
		checkExact(t, Cl100k(), text)
	})
}
