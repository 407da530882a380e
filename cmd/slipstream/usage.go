package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"slipstream/server/config"
	"slipstream/server/ledger"
)

// usage: totals from the usage ledger, read from the database the config
// names (or the default SQLite file), grouped by key, model, provider or
// day, as a table, CSV or JSON.

func usageFlags(fs *flag.FlagSet) {
	configFlag(fs)
	fs.String("by", "day", "group by `WHAT`: key, model, provider or day")
	fs.String("from", "", "from `DATE` (YYYY-MM-DD, UTC midnight, or RFC 3339); default: the first record")
	fs.String("to", "", "to `DATE`, that day included (YYYY-MM-DD, UTC, or an RFC 3339 instant, excluded); default: the last record")
	fs.String("format", "table", "`FORMAT`: table, csv or json")
}

// ledgerPlace is the ledger's database serve uses when usage.database is
// not set: config.DefaultUsageDatabase, or "" (the ledger off, with a
// warning on w when there is no state directory to put it in).
func ledgerPlace(cfg *config.Config, w io.Writer) string {
	if !cfg.Usage.On() || cfg.Usage.Database != "" {
		return ""
	}
	p, err := config.DefaultUsageDatabase(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(w, "warning: usage ledger off: %v\n", err)
	}
	return p
}

func runUsage(fs *flag.FlagSet, stdout, stderr io.Writer) int {
	str := func(n string) string { return fs.Lookup(n).Value.String() }
	by, err := ledger.ParseGroup(str("by"))
	if err == nil {
		err = checkFormat(str("format"))
	}
	from, to, rerr := usageRange(str("from"), str("to"))
	if err == nil {
		err = rerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "slipstream usage: %v\n", err)
		return 2
	}
	cfg, src, err := loadConfig(str("config"), "")
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n%v\n", src, err)
		return 1
	}
	ts, err := readTotals(cfg, by, from, to)
	if err != nil {
		fmt.Fprintf(stderr, "slipstream usage: %v\n", err)
		return 1
	}
	switch str("format") {
	case "csv":
		err = writeUsageCSV(stdout, by, ts)
	case "json":
		err = writeUsageJSON(stdout, by, from, to, ts)
	default:
		err = writeUsageTable(stdout, by, ts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "slipstream usage: %v\n", err)
		return 1
	}
	return 0
}

func checkFormat(f string) error {
	switch f {
	case "table", "csv", "json":
		return nil
	}
	return fmt.Errorf("unknown format %q (want table, csv or json)", f)
}

// usageRange parses -from and -to: a date is a whole UTC day (-to
// includes it), an RFC 3339 instant is exact (-to excludes it).
func usageRange(from, to string) (lo, hi time.Time, err error) {
	parse := func(s string, end bool) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		if d, err := time.ParseInLocation(time.DateOnly, s, time.UTC); err == nil {
			if end {
				d = d.AddDate(0, 0, 1)
			}
			return d, nil
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("cannot parse date %q (want YYYY-MM-DD or RFC 3339)", s)
		}
		return t, nil
	}
	if lo, err = parse(from, false); err == nil {
		hi, err = parse(to, true)
	}
	if err == nil && !lo.IsZero() && !hi.IsZero() && !hi.After(lo) {
		err = errors.New("-to is not after -from")
	}
	return lo, hi, err
}

// readTotals opens the ledger's database read-only in spirit (it creates
// nothing: a missing SQLite file is an error) and sums it.
func readTotals(cfg *config.Config, by ledger.Group, from, to time.Time) ([]ledger.Total, error) {
	db := cfg.Usage.Database
	if db == "" {
		var err error
		if db, err = config.DefaultUsageDatabase(os.LookupEnv); err != nil {
			return nil, err
		}
	}
	if !ledger.IsPostgres(db) {
		if _, err := os.Stat(db); err != nil {
			return nil, fmt.Errorf("no usage ledger at %s (slipstream serve creates it when usage is enabled): %w", db, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := ledger.Open(ctx, db)
	if err != nil {
		if d != nil {
			err = errors.Join(err, d.Close())
		}
		return nil, err
	}
	ts, err := d.Totals(ctx, by, from, to)
	return ts, errors.Join(err, d.Close())
}

// usageColumns are the columns after the group's, in every format.
var usageColumns = []string{"requests", "errors", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd", "unpriced"}

func usageRow(t *ledger.Total) []string {
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []string{t.Group, i(t.Requests), i(t.Errors), i(t.Input), i(t.Output), i(t.CacheRead), i(t.CacheWrite), i(t.Reasoning), usd(t.CostNanoUSD), i(t.Unpriced)}
}

// sum adds the totals up, for the table's last line.
func sum(ts []ledger.Total) ledger.Total {
	s := ledger.Total{Group: "TOTAL"}
	for _, t := range ts {
		s.Requests += t.Requests
		s.Errors += t.Errors
		s.Input += t.Input
		s.Output += t.Output
		s.CacheRead += t.CacheRead
		s.CacheWrite += t.CacheWrite
		s.Reasoning += t.Reasoning
		s.CostNanoUSD += t.CostNanoUSD
		s.Unpriced += t.Unpriced
	}
	return s
}

// usd writes billionths of a dollar as dollars with six decimals,
// rounded half away from zero.
func usd(nano int64) string {
	sign := ""
	if nano < 0 {
		sign, nano = "-", -nano
	}
	micro := (nano + 500) / 1000
	return fmt.Sprintf("%s%d.%06d", sign, micro/1e6, micro%1e6)
}

func writeUsageTable(w io.Writer, by ledger.Group, ts []ledger.Total) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	head := append([]string{strings.ToUpper(string(by))}, usageColumns...)
	for i := range head {
		head[i] = strings.ToUpper(head[i])
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for i := range ts {
		row := usageRow(&ts[i])
		if row[0] == "" {
			row[0] = "-"
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	total := sum(ts)
	fmt.Fprintln(tw, strings.Join(usageRow(&total), "\t")+"\t")
	return tw.Flush()
}

func writeUsageCSV(w io.Writer, by ledger.Group, ts []ledger.Total) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{string(by)}, usageColumns...)); err != nil {
		return err
	}
	for i := range ts {
		if err := cw.Write(usageRow(&ts[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// usageJSON is the JSON output: the grouping, the range and the totals.
type usageJSON struct {
	By     ledger.Group     `json:"by"`
	From   *time.Time       `json:"from"`
	To     *time.Time       `json:"to"`
	Totals []usageJSONTotal `json:"totals"`
}

type usageJSONTotal struct {
	ledger.Total
	CostUSD string `json:"cost_usd"`
}

func writeUsageJSON(w io.Writer, by ledger.Group, from, to time.Time, ts []ledger.Total) error {
	out := usageJSON{By: by, Totals: make([]usageJSONTotal, 0, len(ts))}
	if !from.IsZero() {
		out.From = &from
	}
	if !to.IsZero() {
		out.To = &to
	}
	for _, t := range ts {
		out.Totals = append(out.Totals, usageJSONTotal{Total: t, CostUSD: usd(t.CostNanoUSD)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
