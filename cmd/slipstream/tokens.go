package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"slipstream/tokenize"
)

// runTokens implements `slipstream tokens [-encoding E] [-ids] [FILE]`: it
// prints the token count of FILE (or stdin), or the token ids one per line.
func runTokens(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokens", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("encoding", "o200k_base", "o200k_base or cl100k_base")
	ids := fs.Bool("ids", false, "print the token ids, one per line, instead of the count")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	enc, err := tokenize.Get(*name)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	in := stdin
	if fs.NArg() > 0 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "cannot open input: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	text, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintf(stderr, "cannot read input: %v\n", err)
		return 1
	}
	if !*ids {
		fmt.Fprintln(stdout, enc.Count(text))
		return 0
	}
	w := bufio.NewWriter(stdout)
	var line []byte
	for _, id := range enc.AppendTokens(nil, text) {
		line = strconv.AppendUint(line[:0], uint64(id), 10)
		line = append(line, '\n')
		_, _ = w.Write(line)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "cannot write: %v\n", err)
		return 1
	}
	return 0
}
