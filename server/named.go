package server

// Every error slipstream writes for a failed upstream answer names the
// provider, so that a client (and whoever reads its logs) can tell which
// upstream failed when several serve one model: "provider NAME: ...".
// The buffers live in the exchange, so naming costs no allocation.

// providerPrefix returns "provider NAME: " for x's current target, in
// x.errPrefix: valid until the exchange is released or its target
// changes.
func (x *exchange) providerPrefix() []byte {
	x.errPrefix = append(append(append(x.errPrefix[:0], "provider "...), x.target.Provider.Name...), ": "...)
	return x.errPrefix
}

// named returns msg after x's provider prefix, in x.msgBuf: valid until
// the next call.
func (x *exchange) named(msg []byte) []byte {
	x.msgBuf = append(append(x.msgBuf[:0], x.providerPrefix()...), msg...)
	return x.msgBuf
}
