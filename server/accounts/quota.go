package accounts

import (
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Signal is what one upstream answer says about an account's quota.
type Signal struct {
	// Until, when set, rests the whole account (every model): a used-up
	// quota window, with the time the provider says it resets.
	Until  time.Time
	Reason string
	// PerModel: Until rests only the model asked for (Google's quota is
	// per model), not the whole account.
	PerModel bool
	// Ban, when set, is the provider's message that the account is
	// banned or suspended: it is disabled.
	Ban string
	// Long is the reset of the account's longer (weekly) window, from
	// passive headers; zero when unknown.
	Long time.Time
	// Roll is when passive headers say the used-up window rolls over,
	// when that is before Until: the account is probed then.
	Roll time.Time
	// Open reports that passive headers say every window has room: a
	// resting account may come back.
	Open bool
	// Util is the utilisation (0..1) of the short and long windows, -1
	// when unknown.
	Util [2]float64
}

// Header reads one response header (nil when absent).
type Header func(name string) []byte

// ReadSignal reads the quota and ban signals of an answer from an
// account of type typ. body is the error body (or the first stream event
// of a 200) and may be nil.
func ReadSignal(typ string, status int, h Header, body []byte, now time.Time) Signal {
	s := Signal{Util: [2]float64{-1, -1}}
	switch typ {
	case TypeClaude:
		s.claude(status, h, body, now)
	case TypeCodex:
		s.codex(status, h, body, now)
	default:
		s.google(status, body, now)
	}
	// A 429 that names no quota window (Retry-After alone, a transient
	// rate limit) is left to the per-model cooldown table.
	return s
}

// epochOrTime reads epoch seconds or an RFC 3339 time.
func epochOrTime(v []byte) time.Time {
	if len(v) == 0 {
		return time.Time{}
	}
	if n, err := strconv.ParseFloat(string(v), 64); err == nil && n > 0 {
		return time.Unix(int64(n), 0)
	}
	t, _ := time.Parse(time.RFC3339, string(v))
	return t
}

// claude reads Anthropic's unified rate-limit headers: per window
// (5h, 7d) a status (allowed, allowed_warning, rejected), a reset (epoch
// seconds) and a utilisation; a rejected window rests the whole account
// until the latest reset among the rejected windows.
func (s *Signal) claude(status int, h Header, body []byte, now time.Time) {
	const p = "Anthropic-Ratelimit-Unified-"
	windows := [...]string{"5h", "7d"}
	known, open := false, true
	for i, w := range windows {
		st := h(p + w + "-Status")
		reset := epochOrTime(h(p + w + "-Reset"))
		if u := h(p + w + "-Utilization"); len(u) > 0 {
			if f, err := strconv.ParseFloat(string(u), 64); err == nil {
				s.Util[i] = f
			}
		}
		if i == 1 && !reset.IsZero() {
			s.Long = reset
		}
		if len(st) == 0 {
			continue
		}
		known = true
		if string(st) == "rejected" {
			open = false
			if reset.After(s.Until) {
				s.Until, s.Reason = reset, "claude "+w+" window used up"
			}
		}
	}
	if st := h(p + "Status"); string(st) == "rejected" {
		open = false
		if s.Until.IsZero() {
			if r := epochOrTime(h(p + "Reset")); !r.IsZero() {
				s.Until, s.Reason = r, "claude usage limit"
			}
		}
	}
	s.Open = known && open && status < 400
	if status == 400 || status == 403 {
		s.Ban = claudeBan(status, body)
	}
}

// claudeBanned is Anthropic's 400 message for a banned organization.
const claudeBanned = "This organization has been disabled"

// claudeOrgBlocked are the 403 messages of an organization whose
// subscription (OAuth) access is disabled.
var claudeOrgBlocked = [...]string{claudeBanned, "OAuth authentication is currently not allowed for this organization"}

// claudeBan returns the ban message of a Claude error answer, or "": a
// 400 whose message is exactly claudeBanned; a 403 whose error type or
// code is oauth_org_not_allowed, or whose message is exactly one of
// claudeOrgBlocked. Ban answers are matched whole: an error message may
// quote the client's input ("Unexpected value(s) `...` for the
// `anthropic-beta` header"), so a message that merely contains a ban
// sentence is the client's error and never disables an account.
func claudeBan(status int, body []byte) string {
	e := gjson.GetBytes(body, "error")
	msg := e.Get("message").String()
	if status == 400 {
		if sentence(msg, claudeBanned) {
			return msg
		}
		return ""
	}
	const code = "oauth_org_not_allowed"
	if e.Get("type").String() == code || e.Get("code").String() == code {
		if msg == "" {
			return "subscription access is not allowed for this organization"
		}
		return msg
	}
	for _, b := range claudeOrgBlocked {
		if sentence(msg, b) {
			return msg
		}
	}
	return ""
}

// sentence reports whether msg is the sentence want, ignoring case,
// surrounding space and a final period.
func sentence(msg, want string) bool {
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ".")
	return strings.EqualFold(msg, want)
}

// codex reads ChatGPT's quota answer (429 usage_limit_reached with
// resets_at or resets_in_seconds) and its passive x-codex-primary-* and
// -secondary-* headers (the longer window is the weekly one).
func (s *Signal) codex(status int, h Header, body []byte, now time.Time) {
	type win struct {
		minutes float64
		reset   time.Time
		used    float64
	}
	var ws [2]win
	known := false
	for i, name := range [...]string{"X-Codex-Primary-", "X-Codex-Secondary-"} {
		w := &ws[i]
		w.used = -1
		if v := h(name + "Used-Percent"); len(v) > 0 {
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				w.used, known = f, true
			}
		}
		if v := h(name + "Window-Minutes"); len(v) > 0 {
			w.minutes, _ = strconv.ParseFloat(string(v), 64)
		}
		if v := h(name + "Reset-After-Seconds"); len(v) > 0 {
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				w.reset = now.Add(time.Duration(f * float64(time.Second)))
			}
		} else if v := h(name + "Reset-At"); len(v) > 0 {
			w.reset = epochOrTime(v)
		}
	}
	short, long := 0, 1
	if ws[0].minutes > ws[1].minutes {
		short, long = 1, 0
	}
	s.Long = ws[long].reset
	for i, k := range [2]int{short, long} {
		if ws[k].used >= 0 {
			s.Util[i] = ws[k].used / 100
		}
	}
	for _, w := range ws {
		if w.used >= 100 && !w.reset.IsZero() && (s.Roll.IsZero() || w.reset.After(s.Roll)) {
			s.Roll = w.reset
		}
	}
	limit := string(h("X-Codex-Limit-Reached")) == "true"
	s.Open = known && !limit && ws[0].used < 100 && ws[1].used < 100 && status < 400
	typ := gjson.GetBytes(body, "error.type").String()
	if typ == "" {
		typ = gjson.GetBytes(body, "error.code").String()
	}
	switch {
	case typ == "usage_limit_reached":
		if r := gjson.GetBytes(body, "error.resets_at"); r.Exists() {
			s.Until = time.Unix(r.Int(), 0)
		} else if r := gjson.GetBytes(body, "error.resets_in_seconds"); r.Exists() {
			s.Until = now.Add(time.Duration(r.Int()) * time.Second)
		}
		if s.Until.IsZero() {
			s.Until = now.Add(5 * time.Hour) // a used-up window with no reset time
		}
		s.Reason = "codex usage limit reached"
	case limit:
		for _, w := range ws {
			if w.used >= 100 && w.reset.After(s.Until) {
				s.Until, s.Reason = w.reset, "codex window used up"
			}
		}
	case typ == "account_deactivated":
		// The code, not the message: a message may quote the client's
		// input (a model or parameter name).
		s.Ban = gjson.GetBytes(body, "error.message").String()
		if s.Ban == "" {
			s.Ban = typ
		}
	}
}

// google reads a Code Assist 429 RESOURCE_EXHAUSTED (RetryInfo
// retryDelay, ErrorInfo quotaResetDelay, or "reset after Ns" in the
// message) and a 403 TOS_VIOLATION suspension.
func (s *Signal) google(status int, body []byte, now time.Time) {
	if len(body) > 0 && body[0] == '[' {
		body = []byte(gjson.GetBytes(body, "0").Raw)
	}
	e := gjson.GetBytes(body, "error")
	if status == 403 || e.Get("status").String() == "PERMISSION_DENIED" {
		for _, d := range e.Get("details").Array() {
			if d.Get("reason").String() == "TOS_VIOLATION" {
				s.Ban = e.Get("message").String()
				if s.Ban == "" {
					s.Ban = "TOS_VIOLATION"
				}
				return
			}
		}
	}
	if status != 429 && e.Get("status").String() != "RESOURCE_EXHAUSTED" {
		return
	}
	var d time.Duration
	for _, det := range e.Get("details").Array() {
		if v := det.Get("retryDelay").String(); v != "" {
			d = max(d, googleDuration(v))
		}
		if v := det.Get("metadata.quotaResetDelay").String(); v != "" {
			d = max(d, googleDuration(v))
		}
	}
	if d == 0 {
		msg := e.Get("message").String()
		if i := strings.Index(msg, "reset after "); i >= 0 {
			f := strings.Fields(msg[i+len("reset after "):])
			if len(f) > 0 {
				d = googleDuration(strings.TrimRight(f[0], ".,"))
			}
		}
	}
	if d > 0 {
		s.Until, s.Reason, s.PerModel = now.Add(d), "google quota exhausted", true
	}
}

// googleDuration reads "0.84s", "3600s" or a Go duration ("1h2m3s").
func googleDuration(v string) time.Duration {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "s"), 64); err == nil && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	return 0
}
