// Package testkit holds the small helpers the test suites of several
// packages share: a log buffer safe for a server writing while the test
// reads (and waits for lines in it), a bounded wait on a condition (in
// place of a fixed sleep), loopback addresses that are free or closed,
// and an environment lookup that holds only what the test gives it. It is
// imported by tests only. The shared raw-socket pieces live in
// internal/rawhttp, the stub services in their own packages
// (internal/redistest, internal/oauthstub); a stub or raw server only one
// package uses stays beside its tests.
package testkit
