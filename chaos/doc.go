// Package chaos puts slipstream in front of upstreams that misbehave and
// clients that hang up, and checks that it never crashes, never leaks and
// never tells a client that a broken exchange succeeded.
//
// The package itself holds the pieces the suite and the cross-package fuzz
// targets (slipstream/fuzz) share: a raw-TCP upstream whose every answer
// is scripted (Upstream), well-formed replies of each provider dialect
// (Reply), the client's request of each dialect (ClientRequest), and the
// checks that a client's reply is a well-formed success or error in its
// dialect (CheckReply). The suite is in the _test.go files: a table of
// upstream faults (refused, reset, truncated, cut, garbage, a 20 MB line,
// gzip, HTML 500, 429, a stall mid-body, silence, idle close, restart) and
// client faults (hang-ups in
// each phase, a client that stops reading), crossed with same-dialect and
// translated routes, streamed and not, for the four client dialects. Each
// case also checks that upstream connections, admission slots, goroutines
// and file descriptors come back to their baseline, and that no secret
// reaches the access log. It runs in go test ./chaos/ and under -race.
package chaos
