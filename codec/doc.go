// Package codec holds what every dialect shares: the dialect names, the
// dialect-neutral request and event shapes that translators pass between a
// reader of one dialect and a writer of another, and append-style JSON
// helpers that work on byte slices.
//
// Nothing in codec decodes JSON into maps or structs. The neutral shapes hold
// borrowed views into the bytes they were read from (a request body, an SSE
// event): text stays JSON-escaped exactly as it arrived, so a writer copies it
// verbatim between quotes and never unescapes or re-escapes it.
package codec
