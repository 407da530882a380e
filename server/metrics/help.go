package metrics

import (
	"bytes"
	"io"
	"strings"
)

// family is the metadata of one metric family: its # TYPE and # HELP.
type family struct{ typ, help string }

// families describes every family slipstream writes, also those that
// writers registered with Writer or Gauge produce. A family missing here
// still gets a # TYPE (counter for a _total name, else gauge) and an empty
// # HELP.
var families = map[string]family{
	"slipstream_requests_total":                 {"counter", "Requests answered, by route, client dialect, provider, model label and status."},
	"slipstream_request_duration_seconds":       {"histogram", "Time from a request's arrival to its last byte, by route and provider."},
	"slipstream_time_to_first_token_seconds":    {"histogram", "Time from a streamed request's arrival to its first event, by route and provider."},
	"slipstream_tokens_total":                   {"counter", "Tokens used, by kind, provider, model label and whether they were estimated."},
	"slipstream_key_tokens_total":               {"counter", "Tokens used by each client key, by kind."},
	"slipstream_cost_usd_total":                 {"counter", "Cost of requests in US dollars at the price table, by provider, model label, client key and kind (api, or api_equivalent for subscription accounts)."},
	"slipstream_unpriced_requests_total":        {"counter", "Requests served by a model without a price (their cost is unknown), by provider, model label and client key."},
	"slipstream_upstream_attempts_total":        {"counter", "Upstream calls, by provider."},
	"slipstream_failovers_total":                {"counter", "Moves to another credential, provider or fallback before the first byte, by reason."},
	"slipstream_cooldowns_total":                {"counter", "Credentials put in cooldown, by reason."},
	"slipstream_config_reloads_total":           {"counter", "Configuration reloads, by result (ok, rejected)."},
	"slipstream_redis_errors_total":             {"counter", "Shared-state operations that failed (the replica used its local state), and writes dropped because the queue to Redis was full."},
	"slipstream_redis_up":                       {"gauge", "1 while Redis answers, 0 while the replica runs on its local state."},
	"slipstream_redis_pending_writes":           {"gauge", "Writes (counts, settlements, usage, cooldowns) waiting to be sent to Redis; they are kept through an outage, up to 4096."},
	"slipstream_request_bytes_total":            {"counter", "Request body bytes received."},
	"slipstream_response_bytes_total":           {"counter", "Response bytes sent."},
	"slipstream_requests_in_flight":             {"gauge", "Requests admitted and not yet answered."},
	"slipstream_request_bytes_in_flight":        {"gauge", "Bytes counted against limits.max_bytes_in_flight now."},
	"slipstream_panics_recovered_total":         {"counter", "Panics recovered in request handling (each one is a bug)."},
	"slipstream_provider_credentials":           {"gauge", "Credentials configured, by provider."},
	"slipstream_upstream_max_conns":             {"gauge", "Upstream connection pool size, by provider."},
	"slipstream_websocket_connections":          {"gauge", "Open WebSocket connections."},
	"slipstream_websocket_state_bytes":          {"gauge", "Bytes of conversation state kept for WebSocket connections."},
	"slipstream_websocket_upgrades_total":       {"counter", "WebSocket upgrades accepted."},
	"slipstream_websocket_refused_total":        {"counter", "WebSocket upgrades refused."},
	"slipstream_websocket_frames_total":         {"counter", "WebSocket request frames served."},
	"slipstream_websocket_chained_frames_total": {"counter", "WebSocket frames that continued a kept conversation."},
	"slipstream_websocket_not_found_total":      {"counter", "WebSocket frames naming a previous response that was not kept."},
	"slipstream_websocket_evicted_total":        {"counter", "WebSocket conversation states dropped to stay within limits.ws_state_bytes."},
	"slipstream_account_requests_total":         {"counter", "Upstream answers from each subscription account, by status."},
	"slipstream_account_refreshes_total":        {"counter", "Token refreshes of each subscription account, by outcome."},
	"slipstream_account_cooldowns_total":        {"counter", "Account-wide rests of each subscription account, by reason."},
	"slipstream_account_tokens_total":           {"counter", "Tokens each subscription account served, by kind."},
	"slipstream_account_cooling":                {"gauge", "1 while a subscription account rests, else 0."},
	"slipstream_account_window_utilisation":     {"gauge", "Share of each subscription account's usage window used, by window."},
	"slipstream_ledger_records_total":           {"counter", "Usage ledger records, by result: written, or dropped (queue full, or not written by shutdown)."},
	"slipstream_ledger_batch_failures_total":    {"counter", "Usage ledger batch writes the database refused (each is retried)."},
	"slipstream_guardrail_matches_total":        {"counter", "Guardrail matches in request content, by rule and action (redact, block, log)."},
}

// appendExposition copies the text exposition src to dst with one # HELP
// and one # TYPE line before each family: those the metrics library wrote
// get their help text from families, duplicates are dropped, and a family
// written without them (by a Writer) gets them. A counter whose name does
// not end in _total (two of the Go runtime's) gets the suffix, as the
// Prometheus conventions want. Every family's samples must be contiguous
// in src.
func appendExposition(dst, src []byte) []byte {
	seen := map[string]bool{}
	cur, suffix := "", ""
	for len(src) > 0 {
		var line []byte
		line, src, _ = bytes.Cut(src, []byte{'\n'})
		if rest, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name, text, _ := bytes.Cut(rest, []byte{' '})
			typ := typeOf(string(name))
			if next, tail, _ := bytes.Cut(src, []byte{'\n'}); bytes.HasPrefix(next, []byte("# TYPE ")) {
				typ = string(next[bytes.LastIndexByte(next, ' ')+1:])
				src = tail
			}
			cur = string(name)
			suffix = counterSuffix(cur, typ)
			if !seen[cur] {
				seen[cur] = true
				dst = appendMeta(dst, cur, suffix, typ, text)
			}
			continue
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name := sampleName(line)
		if !inFamily(name, cur) {
			cur = string(name)
			typ := typeOf(cur)
			suffix = counterSuffix(cur, typ)
			if !seen[cur] {
				seen[cur] = true
				dst = appendMeta(dst, cur, suffix, typ, nil)
			}
		}
		dst = append(dst, name...)
		dst = append(dst, suffix...)
		dst = append(append(dst, line[len(name):]...), '\n')
	}
	return dst
}

// counterSuffix is what a family's name lacks to be a counter's.
func counterSuffix(name, typ string) string {
	if typ == "counter" && !strings.HasSuffix(name, "_total") {
		return "_total"
	}
	return ""
}

// appendMeta appends a family's HELP (from families, else help) and TYPE.
func appendMeta(dst []byte, name, suffix, typ string, help []byte) []byte {
	dst = append(append(append(dst, "# HELP "...), name...), suffix...)
	if f, ok := families[name]; ok {
		dst = append(append(dst, ' '), f.help...)
	} else if len(help) > 0 {
		dst = append(append(dst, ' '), help...)
	}
	dst = append(append(append(append(dst, "\n# TYPE "...), name...), suffix...), ' ')
	return append(append(dst, typ...), '\n')
}

func typeOf(name string) string {
	if f, ok := families[name]; ok {
		return f.typ
	}
	if strings.HasSuffix(name, "_total") {
		return "counter"
	}
	return "gauge"
}

// inFamily reports whether a sample named name belongs to family cur: the
// family's own name, or a histogram's or summary's _bucket, _sum, _count.
func inFamily(name []byte, cur string) bool {
	rest, ok := bytes.CutPrefix(name, []byte(cur))
	if !ok || cur == "" {
		return false
	}
	switch string(rest) {
	case "", "_bucket", "_sum", "_count":
		return true
	}
	return false
}

func sampleName(line []byte) []byte {
	if i := bytes.IndexAny(line, "{ "); i >= 0 {
		return line[:i]
	}
	return line
}

// exposition collects the text format to rewrite before it is written.
type exposition struct{ buf []byte }

func (e *exposition) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	return len(p), nil
}

func (e *exposition) writeTo(w io.Writer) {
	out := appendExposition(make([]byte, 0, len(e.buf)+len(e.buf)/4), e.buf)
	_, _ = w.Write(out) // a scrape's write error is the scraper's
}
