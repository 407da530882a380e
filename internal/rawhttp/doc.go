// Package rawhttp holds the raw-socket pieces the test suites of several
// packages share: a connection dialed from a server's base URL and closed
// with the test, and the bytes of a WebSocket upgrade request, for tests
// that must control every byte on the wire (timing, framing, refusals)
// rather than go through an HTTP client. It is imported by tests only.
package rawhttp
