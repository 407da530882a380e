package server

import (
	"slipstream/codec"
	"slipstream/server/keys"
	"slipstream/tokenize"
)

// outcomePart is how the request ended, for whoever finishes it (release):
// the status sent and the result, the errors, the usage, the client key's
// reservation and the admission bookkeeping. Stages record into it; only
// finish reads it as a whole.
type outcomePart struct {
	// What the access log needs, copied out of the RequestCtx before the
	// handler returns (fasthttp recycles the ctx while a stream may still
	// run): the status sent, and how the response ended.
	status  int
	result  result
	upErr   error // why the upstream body was not read to its end, or nil
	callErr error // the failed upstream call's error, or nil

	// Usage for the access log and metrics (usage.go, access.go).
	usage  codec.Usage
	estOut int64              // output tokens counted locally while no usage was known
	tok    *tokenize.Encoding // the model's encoding, once needed
	spans  []byte             // unescaped text spans while counting tokens

	// The client key's reservation (keylimits.go): the request's input
	// counted for it (or 0), and the tokens held until finish settles
	// them.
	inTokens int64
	reserved keys.Reservation

	// held is what hold counted of the answer's buffers in the bytes in
	// flight; x gives it back with its request's size when it leaves.
	held int64
	left bool // the admission slot was given back early
}

// Reset forgets the outcome. finish has settled the reservation
// (chargeKey clears reserved) and given the admission back.
func (o *outcomePart) Reset() {
	o.status, o.result, o.upErr, o.callErr = 0, resultOK, nil, nil
	o.usage, o.estOut, o.tok = codec.Usage{}, 0, nil
	o.spans = trimScratch(o.spans)
	o.inTokens, o.held, o.left = 0, 0, false
}
