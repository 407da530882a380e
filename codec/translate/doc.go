// Package translate pairs the dialect packages: it turns a client request of
// one dialect into an upstream request of another (through codec.Request),
// and an upstream response, streamed or not, back into the client's dialect
// (through codec.Event).
//
// Which reader, writer, decoder and encoder serve a dialect is written down
// once, in the table in table.go. There is no registry and no init().
package translate
