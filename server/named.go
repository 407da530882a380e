package server

import (
	"slipstream/codec"
	"slipstream/pool"
)

// Every error slipstream writes for a failed upstream answer names the
// provider, so that a client (and whoever reads its logs) can tell which
// upstream failed when several serve one model: "provider NAME: ...".
// The buffers live in the exchange, so naming costs no allocation.

// providerPrefix returns "provider NAME: " for x's current target, in
// x.errPrefix, escaped as JSON string content (error messages are; a
// provider's name is the operator's free text): valid until the exchange
// is released or its target changes.
func (x *exchange) providerPrefix() []byte {
	x.errPrefix = append(x.errPrefix[:0], "provider "...)
	x.errPrefix = codec.AppendEscaped(x.errPrefix, pool.S2B(x.target.Provider.Name))
	x.errPrefix = append(x.errPrefix, ": "...)
	return x.errPrefix
}

// named returns msg after x's provider prefix, in x.msgBuf: valid until
// the next call.
func (x *exchange) named(msg []byte) []byte {
	x.msgBuf = append(append(x.msgBuf[:0], x.providerPrefix()...), msg...)
	return x.msgBuf
}

// nameUpstreamError names the provider in the message of an upstream's
// own 5xx (decoded from its error body) before it is rewritten into the
// client's dialect. A 4xx is about the request and keeps its words (a
// credential rejection is reworded apart).
func (x *exchange) nameUpstreamError(e *codec.Error) {
	if e.Status >= 500 {
		e.Message = x.named(e.Message)
	}
}
