package guardtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// scanner is what the precision/recall harness needs of a guardrail
// engine: redact one request body with every built-in detector on. out is
// the body as it would go upstream (nil: unchanged); matches holds the
// rule name of each match.
type scanner interface {
	redact(body []byte) (out []byte, matches []string, err error)
}

// ruleStat is one detector's line of the table.
type ruleStat struct {
	secrets, caught int               // positive corpus
	byTransport     map[string][2]int // transport -> secrets, caught
	matches         int               // matches reported on the positive corpus
	fp              int               // matches on the negative corpus
}

// corpusRun is one measurement: per rule, plus what went wrong.
type corpusRun struct {
	stats         map[string]*ruleStat
	misses        map[string]*miss // by rule/variant, encoding and place
	missed        int
	broken        []string // bodies whose rewrite is not valid JSON
	posBytes      int
	negBytes      int
	fpExamples    []string
	unknownRules  map[string]int
	positiveFiles int
}

// transports are the columns of the table: the four dialects over HTTP
// and the Responses WebSocket frame.
var transports = append(append([]string(nil), Dialects...), transportWS)

const transportWS = "openai-responses-ws"

var slotNames = [numSlots]string{"file", "write-args", "user", "system", "diff", "shell"}

var escapeNames = [numEscapeModes]string{"js", "python", "go", "php"}

// measure runs sc over the positive corpus (perRule secrets of every rule
// from seed, in groups of groupSize, in every dialect and the WebSocket
// frame, each body in each of the four encoders' styles) and over negMB MiB of negative bodies per dialect.
func measure(t *testing.T, sc scanner, seed uint64, perRule, groupSize, negMB int) *corpusRun {
	t.Helper()
	run := &corpusRun{stats: map[string]*ruleStat{}, unknownRules: map[string]int{}, misses: map[string]*miss{}}
	for _, r := range Rules {
		run.stats[r] = &ruleStat{byTransport: map[string][2]int{}}
	}
	count := func(matches []string, pos bool) {
		for _, m := range matches {
			st := run.stats[m]
			if st == nil {
				run.unknownRules[m]++
				continue
			}
			if pos {
				st.matches++
			} else {
				st.fp++
			}
		}
	}
	secrets := Secrets(seed, perRule)
	groups := (len(secrets) + groupSize - 1) / groupSize
	for g := range groups {
		var group []Secret
		for i := g; i < len(secrets); i += groups {
			group = append(group, secrets[i])
		}
		bodySeed := seed*1000 + uint64(g)
		for _, tr := range transports {
			for m := range numEscapeModes {
				d := tr
				if tr == transportWS {
					d = "ws"
				}
				body := traffic(d, bodySeed, group, m)
				run.posBytes += len(body)
				run.positiveFiles++
				out, matches, err := sc.redact(body)
				if err != nil {
					t.Fatalf("%s body %d: %v", tr, g, err)
				}
				count(matches, true)
				if out == nil {
					out = body
				}
				enc := escapeNames[m]
				leaked, err := Leaks(out, group)
				broken := err != nil
				if broken {
					// A broken body counts as a miss of every secret in it.
					run.broken = append(run.broken, fmt.Sprintf("%s body %d (%s encoding): %v", tr, g, enc, err))
					leaked = group
				}
				for i, s := range group {
					st := run.stats[s.Rule]
					st.secrets++
					bt := st.byTransport[tr]
					bt[0]++
					if !containsSecret(leaked, s) {
						st.caught++
						bt[1]++
						st.byTransport[tr] = bt
						continue
					}
					st.byTransport[tr] = bt
					slot := (i + int(bodySeed%numSlots)) % numSlots
					if slot == slotDiff && multiLine(s) {
						slot = slotFile
					}
					place := slotNames[slot]
					if broken {
						place += " of a body the rewrite broke"
					}
					run.addMiss(fmt.Sprintf("%s/%s, %s encoding, in %s", s.Rule, s.Variant, enc, place), tr, s)
				}
			}
		}
	}
	for k, d := range Dialects {
		body := NegativeBody(d, seed+uint64(k), negMB<<20)
		run.negBytes += len(body)
		out, matches, err := sc.redact(body)
		if err != nil {
			t.Fatalf("negative %s: %v", d, err)
		}
		count(matches, false)
		if out != nil && !json.Valid(out) {
			run.broken = append(run.broken, "negative "+d+": the rewrite is not valid JSON")
		}
		if len(matches) > 0 && len(run.fpExamples) < 20 && out != nil {
			run.fpExamples = append(run.fpExamples, fpContext(out)...)
		}
	}
	return run
}

// miss is a group of secrets left readable: how many, in which transports,
// and one of them in its context.
type miss struct {
	n          int
	transports map[string]bool
	example    string
}

func (r *corpusRun) addMiss(key, transport string, s Secret) {
	r.missed++
	m := r.misses[key]
	if m == nil {
		m = &miss{transports: map[string]bool{}, example: clipText(s.Text(), 120)}
		r.misses[key] = m
	}
	m.n++
	m.transports[transport] = true
}

func containsSecret(ss []Secret, s Secret) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func clipText(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// fpContext returns the text around each placeholder in a rewritten
// negative body (what the engine took for a secret is gone; its
// surroundings say what it was).
func fpContext(out []byte) []string {
	var ctx []string
	s := string(out)
	for {
		i := strings.Index(s, "[REDACTED:")
		if i < 0 || len(ctx) >= 5 {
			return ctx
		}
		ctx = append(ctx, clipText(s[max(0, i-60):min(len(s), i+80)], 200))
		s = s[i+1:]
	}
}

// fpPerMB is false positives per MB (10^6 bytes) of negative bodies.
func (r *corpusRun) fpPerMB(fp int) float64 { return float64(fp) / (float64(r.negBytes) / 1e6) }

// table writes the per-detector table in Markdown.
func (r *corpusRun) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| detector | secrets | recall | %s | false positives | FP per MB |\n|---|--:|--:|%s--:|--:|\n",
		strings.Join(transports, " | "), strings.Repeat("--:|", len(transports)))
	totalS, totalC, totalFP := 0, 0, 0
	for _, rule := range Rules {
		st := r.stats[rule]
		totalS, totalC, totalFP = totalS+st.secrets, totalC+st.caught, totalFP+st.fp
		fmt.Fprintf(&b, "| %s | %d | %s |", rule, st.secrets, pctText(st.caught, st.secrets))
		for _, tr := range transports {
			bt := st.byTransport[tr]
			fmt.Fprintf(&b, " %s |", pctText(bt[1], bt[0]))
		}
		fmt.Fprintf(&b, " %d | %.2f |\n", st.fp, r.fpPerMB(st.fp))
	}
	fmt.Fprintf(&b, "| **all** | %d | %s |%s %d | %.2f |\n", totalS, pctText(totalC, totalS), strings.Repeat(" |", len(transports)), totalFP, r.fpPerMB(totalFP))
	fmt.Fprintf(&b, "\nPositive corpus: %d bodies, %.1f MB; negative corpus: %d bodies, %.1f MB.\n", r.positiveFiles, float64(r.posBytes)/1e6, len(Dialects), float64(r.negBytes)/1e6)
	return b.String()
}

// pctText writes a/b as a percentage with one decimal, "100%" when whole.
func pctText(a, b int) string {
	if a == b && b > 0 {
		return "100%"
	}
	return fmt.Sprintf("%.1f%%", pct(a, b))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// check fails t for every detector under 100% recall, more than maxFPPerMB
// false positives per MB in all, or a rewrite that broke JSON.
func (r *corpusRun) check(t *testing.T, maxFPPerMB float64) {
	t.Helper()
	keys := make([]string, 0, len(r.misses))
	for k := range r.misses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := r.misses[k]
		trs := make([]string, 0, len(m.transports))
		for tr := range m.transports {
			trs = append(trs, tr)
		}
		sort.Strings(trs)
		t.Errorf("missed %d× %s (%s), e.g. %q", m.n, k, strings.Join(trs, " "), m.example)
	}
	for _, b := range r.broken {
		t.Errorf("broken JSON: %s", b)
	}
	for rule, n := range r.unknownRules {
		t.Errorf("the engine reported %d matches of rule %q, which is not a built-in detector", n, rule)
	}
	fp := 0
	for _, rule := range Rules {
		st := r.stats[rule]
		fp += st.fp
		if st.secrets == 0 {
			t.Errorf("%s: no secret reached the check", rule)
		}
		if st.caught < st.secrets {
			t.Errorf("%s: recall %.1f%% (%d of %d)", rule, pct(st.caught, st.secrets), st.caught, st.secrets)
		}
	}
	if got := r.fpPerMB(fp); got > maxFPPerMB {
		t.Errorf("%.2f false positives per MB (%d in %.1f MB), want at most %.0f; for example:\n%s", got, fp, float64(r.negBytes)/1e6, maxFPPerMB, strings.Join(r.fpExamples, "\n"))
	}
}
