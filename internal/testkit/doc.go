// Package testkit holds the small helpers the test suites of several
// packages share: a log buffer safe for a server writing while the test
// reads, a bounded wait on a condition (in place of a fixed sleep),
// loopback addresses that are free or closed, and an environment lookup
// that holds only what the test gives it. It is imported by tests
// only; the raw-socket servers of the tests stay beside them, and the
// stub services live in their own packages (internal/redistest,
// internal/oauthstub).
package testkit
