//go:build ignore

// gen_tables writes the compact rank tables in tables/ from the rank files
// that github.com/pkoukk/tiktoken-go-loader embeds. Run it with
// `go generate ./tokenize/` after the loader version changes.
//
// Blob format (see table.go): the magic "SLTK", a little-endian uint32 token
// count N, then N length bytes (token i has rank i), then the token bytes
// concatenated in rank order.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

func main() {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		if err := generate(name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func generate(name string) error {
	src, err := assets.Assets.ReadFile(name + ".tiktoken")
	if err != nil {
		return fmt.Errorf("cannot read rank file %s: %w", name, err)
	}
	blob, err := buildBlob(src)
	if err != nil {
		return fmt.Errorf("cannot convert rank file %s: %w", name, err)
	}
	if err := os.WriteFile("tables/"+name+".bin", blob, 0o644); err != nil {
		return fmt.Errorf("cannot write table %s: %w", name, err)
	}
	return nil
}

func buildBlob(src []byte) ([]byte, error) {
	var lengths, tokens []byte
	for i, line := range bytes.Split(bytes.TrimRight(src, "\n"), []byte("\n")) {
		b64, rankText, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("line %d has no rank", i+1)
		}
		rank, err := strconv.Atoi(string(rankText))
		if err != nil || rank != i {
			return nil, fmt.Errorf("line %d has rank %q, want %d", i+1, rankText, i)
		}
		tok, err := base64.StdEncoding.DecodeString(string(b64))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if len(tok) == 0 || len(tok) > 255 {
			return nil, fmt.Errorf("line %d: token length %d out of range", i+1, len(tok))
		}
		lengths = append(lengths, byte(len(tok)))
		tokens = append(tokens, tok...)
	}
	out := []byte("SLTK")
	out = binary.LittleEndian.AppendUint32(out, uint32(len(lengths)))
	out = append(out, lengths...)
	return append(out, tokens...), nil
}
