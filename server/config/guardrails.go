package config

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Guardrails configures what slipstream finds and does about secrets and
// personal data in request content (and the model's answers): the
// built-in detectors' actions, the operator's own rules and literal
// lists, the key of the placeholders' hash, and policies per client key
// and provider (docs/GUARDRAILS.md). Plain values only: the server turns
// them into package guard's configuration.
//
// Precedence of a rule's action for one request: the first policy (in
// file order) whose keys and providers both match the request decides;
// in it a rule named by name wins over "*". Without a matching policy, or
// when it names neither, a built-in detector takes guardrails.rules[name],
// then guardrails.rules["*"], then its default; a custom rule or a list
// takes its own action.
type Guardrails struct {
	// Enabled turns guardrails on or off. Default: on when the section
	// sets anything else, off when it is absent or empty.
	Enabled *bool `yaml:"enabled,omitempty"`
	// HashKey keys the hash in placeholders ([REDACTED:rule:3f9a1c]), so
	// that the same secret always gets the same placeholder and nobody
	// without the key can test a guess against one: hex, at least 16
	// bytes (32 hex digits), usually "${ENV}". Never printed. Default: a
	// random key per process, so placeholders change on restart and
	// differ between replicas (the provider's prompt cache misses once
	// per restart; restore still works within a process).
	HashKey string `yaml:"hash_key" secret:"true"`
	// Rules set the action of built-in detectors by name (see
	// GuardrailDetectors), or of all of them with "*": an action alone
	// (redact, block, log, off) or {action, restore}. Default: each
	// detector's default action (docs/GUARDRAILS.md).
	Rules map[string]GuardRule `yaml:"rules"`
	// Custom are the operator's own rules: RE2 regular expressions.
	Custom []GuardCustom `yaml:"custom"`
	// Lists are the operator's literal lists: exact strings to find
	// (customer names, internal host names, known tokens).
	Lists []GuardList `yaml:"lists"`
	// Policies change actions for some client keys and providers: the
	// first that matches a request applies (see the precedence above).
	Policies []GuardPolicy `yaml:"policies"`
}

// GuardRule is a rule's action. In YAML it is the action alone ("redact")
// or a mapping {action, restore}.
type GuardRule struct {
	// Action is redact (replace by a placeholder), block (refuse the
	// request with 400 naming the rule), log (count only) or off.
	// Default redact.
	Action string `yaml:"action"`
	// Restore puts the original value back where the model's answer
	// carries a placeholder slipstream issued for the same client key
	// (text and tool-call arguments). Redact only. Default false.
	Restore bool `yaml:"restore"`
}

func (r *GuardRule) setScalar(v string) { r.Action = v }

func (r *GuardRule) fields() string { return "action, restore" }

// GuardCustom is one operator rule.
type GuardCustom struct {
	// Name names the rule in placeholders, metrics, the log and block
	// messages: lower-case letters, digits and _, starting with a letter,
	// at most 64; not a built-in detector's name.
	Name string `yaml:"name"`
	// Regex is an RE2 regular expression (Go's regexp syntax); the whole
	// match is the secret. It runs over string content as it is on the
	// wire, still JSON-escaped: a line break is the two characters \n, a
	// quote is \", and some clients write / as \/. It must not match the
	// empty string.
	Regex string `yaml:"regex"`
	// Keywords, when set, are literal strings of which one must occur in
	// a request before Regex runs on it: a prefilter that keeps the cost
	// of a regex off requests that cannot match. Default none: the regex
	// runs on every request.
	Keywords []string `yaml:"keywords"`
	// Action as in GuardRule. Default redact.
	Action string `yaml:"action"`
	// Restore as in GuardRule. Default false.
	Restore bool `yaml:"restore"`
}

// GuardList is one operator list of literal strings.
type GuardList struct {
	// Name as in GuardCustom.
	Name string `yaml:"name"`
	// Values are the strings to find, each at least 4 characters. Never
	// printed.
	Values []string `yaml:"values" secret:"true"`
	// File holds more values, one a line (blank lines and lines starting
	// with # skipped), read when the configuration is loaded or reloaded.
	File string `yaml:"file"`
	// Action as in GuardRule. Default redact.
	Action string `yaml:"action"`
	// Restore as in GuardRule. Default false.
	Restore bool `yaml:"restore"`
}

// GuardPolicy changes rule actions for the requests it matches.
type GuardPolicy struct {
	// Keys are client key names (keys[].name); empty matches every key.
	Keys []string `yaml:"keys"`
	// Providers are provider names (providers[].name); empty matches
	// every provider. A request matches on the provider that serves it,
	// failover and fallbacks included.
	Providers []string `yaml:"providers"`
	// Rules as in Guardrails.Rules, with custom rule and list names too;
	// here "*" covers every rule (custom rules and lists included).
	Rules map[string]GuardRule `yaml:"rules"`
}

// Guardrail actions.
const (
	GuardRedact = "redact"
	GuardBlock  = "block"
	GuardLog    = "log"
	GuardOff    = "off"
)

// GuardAll is the rule name that stands for every rule.
const GuardAll = "*"

// GuardrailDetectors are the names of package guard's built-in detectors.
// (A test checks them against the corpus in guard/guardtest.)
var GuardrailDetectors = []string{
	"aws_access_key_id", "aws_secret_access_key", "gcp_service_account_key", "google_api_key",
	"azure_storage_key", "github_token", "gitlab_token", "slack_token", "slack_webhook",
	"stripe_live_key", "openai_api_key", "anthropic_api_key", "npm_token", "pypi_token",
	"private_key", "jwt", "database_url", "email", "phone", "payment_card", "iban", "us_ssn",
}

// minGuardKey is the shortest hash key accepted, in bytes.
const minGuardKey = 16

// minGuardLiteral is the shortest literal a list may hold: a shorter one
// would match all over ordinary text.
const minGuardLiteral = 4

var guardName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// On reports whether guardrails are enabled.
func (g *Guardrails) On() bool {
	if g.Enabled != nil {
		return *g.Enabled
	}
	return g.HashKey != "" || len(g.Rules) > 0 || len(g.Custom) > 0 || len(g.Lists) > 0 || len(g.Policies) > 0
}

// HashKeyBytes returns the decoded hash key, nil when none is set.
func (g *Guardrails) HashKeyBytes() ([]byte, error) {
	if g.HashKey == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(strings.TrimSpace(g.HashKey))
	if err != nil {
		return nil, errors.New("not hex (want at least 32 hex digits, e.g. from `openssl rand -hex 32`)")
	}
	if len(b) < minGuardKey {
		return nil, fmt.Errorf("%d bytes is too short: want at least %d (32 hex digits; `openssl rand -hex 32`)", len(b), minGuardKey)
	}
	return b, nil
}

// Policy returns the index of the first policy matching a request of
// client key keyName served by provider, or -1.
func (g *Guardrails) Policy(keyName, provider string) int {
	for i := range g.Policies {
		p := &g.Policies[i]
		if (len(p.Keys) == 0 || slices.Contains(p.Keys, keyName)) && (len(p.Providers) == 0 || slices.Contains(p.Providers, provider)) {
			return i
		}
	}
	return -1
}

// Action returns the action of rule under policy (an index from Policy,
// or -1 for none) by the precedence documented on Guardrails. ok is false
// when nothing in the configuration names a built-in detector: it keeps
// its default. A name that is not a rule returns ok false.
func (g *Guardrails) Action(policy int, rule string) (r GuardRule, ok bool) {
	if policy >= 0 && policy < len(g.Policies) {
		p := g.Policies[policy].Rules
		if r, ok := p[rule]; ok {
			return r.withDefault(), true
		}
		if r, ok := p[GuardAll]; ok {
			return r.withDefault(), true
		}
	}
	for _, c := range g.Custom {
		if c.Name == rule {
			return GuardRule{Action: c.Action, Restore: c.Restore}.withDefault(), true
		}
	}
	for _, l := range g.Lists {
		if l.Name == rule {
			return GuardRule{Action: l.Action, Restore: l.Restore}.withDefault(), true
		}
	}
	if !slices.Contains(GuardrailDetectors, rule) {
		return GuardRule{}, false
	}
	if r, ok := g.Rules[rule]; ok {
		return r.withDefault(), true
	}
	if r, ok := g.Rules[GuardAll]; ok {
		return r.withDefault(), true
	}
	return GuardRule{}, false
}

func (r GuardRule) withDefault() GuardRule {
	if r.Action == "" {
		r.Action = GuardRedact
	}
	return r
}

// Load returns the list's values and the lines of its file (trimmed;
// blank lines and # comments skipped). Errors name the file, never a
// value.
func (l *GuardList) Load() ([]string, error) {
	out := slices.Clone(l.Values)
	if l.File == "" {
		return out, nil
	}
	f, err := os.Open(l.File)
	if err != nil {
		return nil, fmt.Errorf("cannot read the list file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the list file %s: %w", l.File, err)
	}
	return out, nil
}

// validateGuardrails checks the guardrails section; no problem quotes a
// hash key or a list value.
func (c *Config) validateGuardrails(add func(string, string, ...any)) {
	g := &c.Guardrails
	if _, err := g.HashKeyBytes(); err != nil {
		add("guardrails.hash_key", "%v", err)
	}
	names := map[string]string{} // custom and list names -> where defined
	for i := range g.Custom {
		g.Custom[i].validate(fmt.Sprintf("guardrails.custom[%d]", i), names, add)
	}
	for i := range g.Lists {
		g.Lists[i].validate(fmt.Sprintf("guardrails.lists[%d]", i), names, add)
	}
	validateGuardRules("guardrails.rules", g.Rules, func(n string) bool { return slices.Contains(GuardrailDetectors, n) },
		"a built-in detector (custom rules and lists carry their own action)", add)
	for i, p := range g.Policies {
		path := fmt.Sprintf("guardrails.policies[%d]", i)
		if len(p.Keys) == 0 && len(p.Providers) == 0 {
			add(path, "a policy needs keys or providers (to change every request, set guardrails.rules)")
		}
		for j, k := range p.Keys {
			if !slices.ContainsFunc(c.Keys, func(ck Key) bool { return ck.Name == k }) {
				add(fmt.Sprintf("%s.keys[%d]", path, j), "no client key named %q", clip(k))
			}
		}
		for j, pr := range p.Providers {
			if c.Provider(pr) == nil {
				add(fmt.Sprintf("%s.providers[%d]", path, j), "no provider named %q", clip(pr))
			}
		}
		if len(p.Rules) == 0 {
			add(path+".rules", "empty: name the rules this policy changes (\"*\": off turns guardrails off for it)")
		}
		validateGuardRules(path+".rules", p.Rules, func(n string) bool { return slices.Contains(GuardrailDetectors, n) || names[n] != "" },
			"a built-in detector, a custom rule or a list", add)
	}
}

// validateGuardRules checks a rules map: known names (or "*"), known
// actions, restore only with redact. Names are checked in sorted order so
// problems come out the same way every time.
func validateGuardRules(path string, rules map[string]GuardRule, known func(string) bool, what string, add func(string, string, ...any)) {
	keys := make([]string, 0, len(rules))
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		p := path + "." + name
		if name != GuardAll && !known(name) {
			msg := fmt.Sprintf("unknown rule %q: want \"*\" or %s", clip(name), what)
			if s := closestName(name, GuardrailDetectors); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			add(p, "%s", msg)
		}
		r := rules[name]
		checkGuardAction(p, p+".restore", r.Action, r.Restore, add)
	}
}

// checkGuardAction checks an action ("" is redact) and its restore flag.
func checkGuardAction(actionPath, restorePath, action string, restore bool, add func(string, string, ...any)) {
	switch action {
	case "", GuardRedact, GuardBlock, GuardLog, GuardOff:
	default:
		add(actionPath, "unknown action %q (want redact, block, log or off)", clip(action))
		return
	}
	if restore && action != "" && action != GuardRedact {
		add(restorePath, "restore applies to action redact only (this rule is %s)", action)
	}
}

// checkGuardName checks a custom rule's or list's name and records it.
func checkGuardName(path, name string, names map[string]string, add func(string, string, ...any)) {
	switch {
	case name == "":
		add(path+".name", "missing name (it names the rule in placeholders, metrics and the log)")
	case !guardName.MatchString(name):
		add(path+".name", "%q: want lower-case letters, digits and _, starting with a letter, at most 48", clip(name))
	case slices.Contains(GuardrailDetectors, name):
		add(path+".name", "%q is a built-in detector: set its action under guardrails.rules, or choose another name", name)
	case names[name] != "":
		add(path+".name", "duplicate rule name %q (also %s)", name, names[name])
	default:
		names[name] = path
	}
}

func (cr *GuardCustom) validate(path string, names map[string]string, add func(string, string, ...any)) {
	checkGuardName(path, cr.Name, names, add)
	checkGuardAction(path+".action", path+".restore", cr.Action, cr.Restore, add)
	for j, k := range cr.Keywords {
		if k == "" {
			add(fmt.Sprintf("%s.keywords[%d]", path, j), "empty keyword (it would let every request through the prefilter)")
		}
	}
	if cr.Regex == "" {
		add(path+".regex", "missing regex for rule %q", cr.Name)
		return
	}
	re, err := regexp.Compile(cr.Regex)
	if err != nil {
		add(path+".regex", "rule %q: cannot compile the regex: %s", cr.Name, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return
	}
	if re.MatchString("") {
		add(path+".regex", "rule %q: the regex matches the empty string, so it would match everywhere", cr.Name)
	}
}

func (l *GuardList) validate(path string, names map[string]string, add func(string, string, ...any)) {
	checkGuardName(path, l.Name, names, add)
	checkGuardAction(path+".action", path+".restore", l.Action, l.Restore, add)
	for j, v := range l.Values {
		if len(strings.TrimSpace(v)) < minGuardLiteral {
			add(fmt.Sprintf("%s.values[%d]", path, j), "shorter than %d characters: it would match all over ordinary text", minGuardLiteral)
		}
	}
	if len(l.Values) == 0 && l.File == "" {
		add(path, "list %q has neither values nor file", l.Name)
		return
	}
	vals, err := l.Load()
	if err != nil {
		add(path+".file", "%v", err)
		return
	}
	if len(vals) == 0 {
		add(path+".file", "list %q is empty", l.Name)
	}
	for j, v := range vals[len(l.Values):] {
		if len(v) < minGuardLiteral {
			add(path+".file", "value %d of the file is shorter than %d characters: it would match all over ordinary text", j+1, minGuardLiteral)
			break
		}
	}
}

// closestName returns the name in names nearest to name when it is a
// likely typo (edit distance at most 2), else "".
func closestName(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(n, name); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
