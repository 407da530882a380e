package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"slipstream/tokenize"
)

func TestRunTokensUsage(t *testing.T) {
	f := func(args []string, stdin string, wantCode int, wantOut, wantErr string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(append([]string{"tokens"}, args...), strings.NewReader(stdin), &out, &errb)
		if code != wantCode || out.String() != wantOut || !strings.Contains(errb.String(), wantErr) {
			t.Fatalf("runTokens(%q) = %d, out %q, err %q; want %d, %q, %q",
				args, code, out.String(), errb.String(), wantCode, wantOut, wantErr)
		}
	}
	f(nil, "hello world", 0, "2\n", "")
	f([]string{"-"}, "hello world", 0, "2\n", "")
	f(nil, "", 0, "0\n", "")
	f(nil, "\t\n\t\nx", 0, "2\n", "")
	f([]string{"-ids", "-encoding", "cl100k_base"}, "hello world", 0, "15339\n1917\n", "")
	f([]string{"-ids"}, "hello world", 0, "24912\n2375\n", "")
	f([]string{"-encoding", "p50k_base"}, "x", 2, "", "cannot get encoding")
	f([]string{"-bogus"}, "x", 2, "", "flag provided but not defined")
	f([]string{"a", "b"}, "x", 2, "", "usage:")
	f([]string{filepath.Join(t.TempDir(), "missing")}, "", 1, "", "cannot read input")
}

// TestRunTokensCorpus: the command agrees with the library on every file of
// the tokenizer's exactness corpus, for both encodings, by count and ids.
func TestRunTokensCorpus(t *testing.T) {
	paths, err := filepath.Glob("../../tokenize/testdata/corpus/*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("cannot list corpus: %v (%d files)", err, len(paths))
	}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []*tokenize.Encoding{tokenize.O200k(), tokenize.Cl100k()} {
			var want bytes.Buffer
			for _, id := range e.AppendTokens(nil, text) {
				want.WriteString(strconv.FormatUint(uint64(id), 10) + "\n")
			}
			var out, errb bytes.Buffer
			if code := runTokens(e.Name(), true, path, nil, &out, &errb); code != 0 ||
				out.String() != want.String() {
				t.Fatalf("%s %s: -ids differs from the library (code %d, %s)", path, e.Name(), code, errb.String())
			}
			out.Reset()
			if code := runTokens(e.Name(), false, "", bytes.NewReader(text), &out, &errb); code != 0 ||
				out.String() != strconv.Itoa(e.Count(text))+"\n" {
				t.Fatalf("%s %s: count %q, want %d", path, e.Name(), out.String(), e.Count(text))
			}
		}
	}
}
