// Package translate pairs the dialect packages: it turns a client request of
// one dialect into an upstream request of another (through codec.Request),
// and an upstream response, streamed or not, back into the client's dialect
// (through codec.Event).
//
// Which reader, writer, decoder, encoder, same-dialect tail and usage
// reader serve a dialect is written down once, in the table in table.go.
// There is no registry and no init(). The server reaches every dialect
// through this package (it imports no dialect package), so the few
// dialect-specific readers it needs beside the table live here too: the
// Code Assist envelope, the account stream readers, the array framing.
package translate
