package server

import (
	"net"
	"time"

	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/pool"
)

// relayPart is the relay of the upstream's answer to the client: the
// event reader, the translator or the tail that watches the stream, the
// output scratch, the client's connection and its write deadline, and what
// the relay measured (bytes out, first-token time). The response stages
// (respondSame, respondTranslated, the pump, passBody, the sinks) own it.
type relayPart struct {
	rd       sse.Reader
	ts       *translate.Stream // the translator, on the translated path
	sameTail translate.Tail    // the tail relaySame watched with, or nil
	bodyTail bodyTail          // the end of a whole body relayed, for its usage
	out      []byte            // client output scratch for one event

	// relayBody is a whole answer passBody relays from relayOff on: a
	// same-dialect upstream body read whole and validated
	// (bufferRelayBody), or a translated one (respondTranslatedBody).
	relayBody *pool.Buffer
	relayOff  int
	pass      passBody // the body stream of a whole answer; bound to x once

	// streamKind is what the stream runs once x is handed to fasthttp as
	// its body stream (sbody).
	streamKind  streamKind
	sbody       streamBody  // the body stream of a streamed answer; bound to x once
	geminiArray geminiArray // the JSON-array framing of a Gemini stream without alt=sse
	hsink       httpSink    // the sink of the HTTP body stream (streamTo)
	fsink       frameSink   // the sink of a WebSocket turn (bindFrames), or zero

	head      []byte          // the response head, for an HTTP/1.0 client (http10) or pings
	conn      net.Conn        // the client's socket (clientConn), or nil
	goneCh    <-chan struct{} // closed when a WebSocket turn's client left (bindFrames), or nil
	lastWrite time.Time       // when the last write deadline was set
	watch     watcher

	ttft     time.Time // when the first event went to the client, or zero
	bytesOut int64     // body bytes written to the client by streams

	gsink *guardSink  // the guardrails' step over response content (guardsink.go), made on first use
	bw    batchWriter // the writer an HTTP stream relays into (batchwriter.go)
}

// Reset gives the relay's buffers back and forgets the stream; the
// bindings made once per pooled exchange (pass, sbody) and the
// watcher (stopped by its owner) are kept.
func (r *relayPart) Reset() {
	if r.ts != nil {
		translate.ReleaseStream(r.ts)
		r.ts = nil
	}
	pool.Put(r.relayBody)
	r.relayBody, r.relayOff = nil, 0
	r.rd.Release()
	r.out = trimScratch(r.out)
	r.geminiArray.reset()
	r.hsink = httpSink{}
	r.fsink = frameSink{}
	r.streamKind = streamNone
	r.conn, r.goneCh, r.lastWrite = nil, nil, time.Time{}
	r.head = trimScratch(r.head)
	r.sameTail, r.ttft, r.bytesOut = nil, time.Time{}, 0
	r.bodyTail.reset(-1)
	if r.gsink != nil {
		r.gsink.Reset()
	}
	r.bw.Reset(nil)
}
