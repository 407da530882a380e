// Package guard is slipstream's guardrails engine: built-in detectors for
// credentials, private keys and PII, operator rules (RE2 expressions and
// literal lists), and the actions redact, block and log, applied to the raw
// JSON bytes the proxy already holds.
//
// Request side: (*Set).ScanBody reads a raw request body once (every string
// value of every dialect, still escaped as on the wire) into a Matches;
// with no match the caller forwards the body unchanged, with a Block match
// it refuses the request naming the rule, and with Redact matches
// (*Matches).AppendRedacted writes the body with placeholders
// [REDACTED:<rule>:<6 hex>] and remembers restorable values in a Vault.
//
// Response side: a Scanner redacts secrets a model echoes and a Restorer
// puts back the values of placeholders the Vault holds for the client's
// scope, both over streamed deltas of raw JSON string content, holding back
// only what may still become a match.
//
// The package reads bytes only: it imports the standard library and pool,
// never fasthttp, codec or server. Matched values never reach an error, a
// log line or a metric label; Hit and the Found methods name rules only.
// See docs/GUARDRAILS.md.
package guard
