package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"slipstream/server/accounts"
)

// accounts: list the stored subscription accounts with their state. No
// token is ever printed.

func accountsFlags(fs *flag.FlagSet) {
	configFlag(fs)
	accountsDirFlag(fs)
}

func runAccounts(path, dirFlag string, stdout, stderr io.Writer) int {
	_, dir, err := accountsConfig(path, dirFlag)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	as, errs := accounts.NewDir(dir).List()
	for _, err := range errs {
		fmt.Fprintf(stderr, "slipstream accounts: %v\n", err)
	}
	if len(as) == 0 {
		fmt.Fprintf(stdout, "no accounts in %s (slipstream login claude|codex|gemini|antigravity)\n", dir)
		return 0
	}
	now := time.Now()
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTYPE\tEMAIL\tPLAN\tVALID UNTIL\tSTATE")
	for _, a := range as {
		valid := "-"
		if !a.Expiry.IsZero() {
			valid = a.Expiry.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Type, dash(a.Email), dash(a.Plan), valid, a.State(now))
	}
	w.Flush()
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func httpClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }
