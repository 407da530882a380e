// Package corpus builds the tokenizer's benchmark inputs from its corpus
// files (tokenize/testdata/corpus), for the package's benchmarks and for
// make bench alike, so that both measure the same bytes.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"
)

// Dir is the corpus directory, relative to the repository's root.
const Dir = "tokenize/testdata/corpus"

// MixFiles are the files of the mixed input: English prose, source code
// in six languages and an agent request in JSON.
var MixFiles = []string{
	"prose.en.txt", "code.go.txt", "request.json", "code.py.txt", "code.ts.txt",
	"code.rs.txt", "code.sh.txt", "code.sql.txt",
}

// Files are the corpus files of a directory, by base name.
type Files map[string][]byte

// Read reads every file in dir.
func Read(dir string) (Files, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("cannot list the corpus in %s: %v (%d files)", dir, err, len(paths))
	}
	files := make(Files, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read a corpus file: %w", err)
		}
		files[filepath.Base(p)] = b
	}
	return files, nil
}

// Mix is size bytes of the mixed input (MixFiles), repeated.
func (f Files) Mix(size int) []byte { return f.repeat(size, MixFiles) }

// All is size bytes of every file, in name order, repeated: the mixed
// input plus prose in six other scripts, emoji, base64 and edge cases.
func (f Files) All(size int) []byte {
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	sort.Strings(names)
	return f.repeat(size, names)
}

// repeat concatenates the named files, each followed by a blank line,
// until size bytes, cut back to a rune boundary.
func (f Files) repeat(size int, names []string) []byte {
	var out []byte
	for len(out) < size {
		for _, name := range names {
			out = append(out, f[name]...)
			out = append(out, "\n\n"...)
		}
	}
	out = out[:size]
	for !utf8.Valid(out) {
		out = out[:len(out)-1]
	}
	return out
}
