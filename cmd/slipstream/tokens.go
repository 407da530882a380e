package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"slipstream/tokenize"
)

// runTokens implements `slipstream tokens [-encoding E] [-ids] [FILE]`: it
// prints the token count of FILE (or stdin when FILE is absent or "-"), or
// with -ids the token ids one per line, exactly as tiktoken's
// encode_ordinary gives them. It returns the exit code: 0 on success, 1 when
// the input cannot be read or the output written, 2 on bad usage.
func runTokens(name string, ids bool, path string, stdin io.Reader, stdout, stderr io.Writer) int {
	enc, err := tokenize.Get(name)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	text, err := readTokensInput(path, stdin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := writeTokens(stdout, enc, text, ids); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func readTokensInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "" || path == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("cannot read stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read input: %w", err)
	}
	return b, nil
}

func writeTokens(stdout io.Writer, enc *tokenize.Encoding, text []byte, ids bool) error {
	w := bufio.NewWriter(stdout)
	var line []byte
	if !ids {
		line = strconv.AppendInt(line, int64(enc.Count(text)), 10)
		line = append(line, '\n')
		w.Write(line) // a write error sticks and Flush reports it
	} else {
		for _, id := range enc.AppendTokens(nil, text) {
			line = strconv.AppendUint(line[:0], uint64(id), 10)
			line = append(line, '\n')
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot write output: %w", err)
	}
	return nil
}
