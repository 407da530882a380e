package chaos

import (
	"bytes"
	"compress/gzip"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"time"

	"slipstream/codec"
)

// An upstream fault is a Handler built for the upstream's dialect and
// whether the request streams.
type upFault func(d codec.Dialect, stream bool) Handler

// contentType is what a healthy upstream labels its answer.
func contentType(stream bool) string {
	if stream {
		return "text/event-stream"
	}
	return "application/json"
}

// good answers well, keeping the connection.
func good(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if !stream {
			return c.Reply(200, "application/json", ReplyBody(d, model, Words)) == nil
		}
		if c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked") != nil {
			return false
		}
		for _, ev := range ReplyEvents(d, model, Words) {
			if c.Chunk(ev) != nil {
				return false
			}
		}
		return c.EndChunks() == nil
	}
}

// firstHalf returns the first half of a reply: whole events for a stream,
// then half of the next event, so the cut lands inside an event.
func firstHalf(d codec.Dialect, stream bool) []byte {
	if !stream {
		b := ReplyBody(d, model, Words)
		return b[:len(b)/2]
	}
	evs := ReplyEvents(d, model, Words)
	n := len(evs) / 2
	out := Stream(evs[:n])
	return append(out, evs[n][:len(evs[n])/2]...)
}

// reset sends half the reply, then a TCP RST.
func reset(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		full := ReplyBody(d, model, Words)
		if stream {
			full = Stream(ReplyEvents(d, model, Words))
		}
		c.Head(200, "Content-Type", contentType(stream), "Content-Length", itoa(len(full)))
		c.Write(firstHalf(d, stream))
		time.Sleep(20 * time.Millisecond) // let the half reach the proxy first
		c.Reset()
		return false
	}
}

// truncated ends the body early inside its framing: a Content-Length body
// with a FIN halfway; a chunked stream that ends cleanly after half its
// events, without the terminal one.
func truncated(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if !stream {
			full := ReplyBody(d, model, Words)
			c.Head(200, "Content-Type", "application/json", "Content-Length", itoa(len(full)))
			c.Write(full[:len(full)/2])
			return false
		}
		evs := ReplyEvents(d, model, Words)
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		c.Chunk(Stream(evs[:len(evs)/2]))
		c.EndChunks()
		return false
	}
}

// closeDelimited sends a body with no length (ended by closing the
// connection), closed after half of it: nothing in the framing says it
// is short.
func closeDelimited(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		c.Head(200, "Content-Type", contentType(stream), "Connection", "close")
		c.Write(firstHalf(d, stream))
		return false
	}
}

// garbage answers 200 with the right Content-Type and random bytes.
func garbage(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		b := make([]byte, 8<<10)
		rand.New(rand.NewSource(int64(d))).Read(b)
		copy(b[100:], "\n\ndata: {\"\n\n") // and an SSE-looking fragment
		if !stream {
			return c.Reply(200, "application/json", b) == nil
		}
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		c.Chunk(b)
		return c.EndChunks() == nil
	}
}

const bigLine = 20 << 20

// hugeLine sends one 20 MB line: a stream's single data line over the
// event cap, or a body whose first line is 20 MB of blanks.
func hugeLine(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if !stream {
			body := append([]byte("{"), bytes.Repeat([]byte(" "), bigLine)...)
			body = append(body, ReplyBody(d, model, Words)[1:]...)
			return c.Reply(200, "application/json", body) == nil
		}
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		line := append([]byte("data: "), bytes.Repeat([]byte("x"), bigLine)...)
		if c.Chunk(line) != nil {
			return false
		}
		c.Chunk([]byte("\n\n"))
		c.Chunk(Stream(ReplyEvents(d, model, Words)))
		return c.EndChunks() == nil
	}
}

// gzipped answers a good reply compressed with Content-Encoding: gzip,
// whatever the request asked for.
func gzipped(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		plain := ReplyBody(d, model, Words)
		if stream {
			plain = Stream(ReplyEvents(d, model, Words))
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(plain)
		zw.Close()
		return c.Reply(200, contentType(stream), z.Bytes(), "Content-Encoding", "gzip", "Vary", "Accept-Encoding") == nil
	}
}

// html500 answers what a load balancer in front of a dead provider does.
func html500(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		return c.Reply(500, "text/html", []byte("<html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>\n")) == nil
	}
}

// stall starts a good reply and goes silent halfway, until the proxy
// leaves (timeouts.idle must end it).
func stall(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if stream {
			c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
			c.Chunk(firstHalf(d, stream))
		} else {
			full := ReplyBody(d, model, Words)
			c.Head(200, "Content-Type", "application/json", "Content-Length", itoa(len(full)))
			c.Write(firstHalf(d, stream))
		}
		c.WaitGone(20 * time.Second)
		return false
	}
}

// rateLimited answers 429 with Retry-After and the dialect's error object.
func rateLimited(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		body := `{"error":{"message":"rate limited","type":"rate_limit_error","param":null,"code":null}}`
		switch d {
		case codec.DialectAnthropic:
			body = `{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`
		case codec.DialectGemini:
			body = `{"error":{"code":429,"message":"rate limited","status":"RESOURCE_EXHAUSTED"}}`
		}
		return c.Reply(429, "application/json", []byte(body), "Retry-After", "1") == nil
	}
}

// silent reads the request and never answers, until the proxy leaves.
func silent(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		c.WaitGone(20 * time.Second)
		return false
	}
}

// drip starts a good reply and then goes on forever, slowly: a stream
// sends a text delta every 20 ms, a body one byte every 20 ms, until the
// proxy leaves.
func drip(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		evs := ReplyEvents(d, model, Words)
		if !stream {
			full := ReplyBody(d, model, Words)
			c.Head(200, "Content-Type", "application/json", "Content-Length", itoa(len(full)+1<<20))
			c.Write(full[:len(full)-2])
			for i := 0; i < 1000 && c.Sleep(20*time.Millisecond); i++ {
				if _, err := c.Write([]byte(" ")); err != nil {
					return false
				}
			}
			return false
		}
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		c.Chunk(Stream(evs[:len(evs)/2]))
		delta := deltaEvent(d)
		for i := 0; i < 1000 && c.Sleep(20*time.Millisecond); i++ {
			if c.Chunk(delta) != nil {
				return false
			}
		}
		return false
	}
}

// flood sends a good reply's head, then 23 KB text deltas as fast as the
// proxy takes them (a body: 8 MB), until the proxy leaves.
func flood(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if !stream {
			// More than the socket buffers hold, in ordinary text
			// (slipstream counts its tokens).
			words := []string{"alpha ", strings.Repeat("flood of ordinary text ", 8<<20/23), " beta gamma"}
			return c.Reply(200, "application/json", ReplyBody(d, model, words)) == nil
		}
		evs := ReplyEvents(d, model, Words)
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		c.Chunk(Stream(evs[:len(evs)/2]))
		// Ordinary text (counted cheaply), no finishReason: every event
		// makes slipstream write to the client.
		big := textDelta(d, strings.Repeat("flood of ordinary text ", 1000))
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if c.Chunk(big) != nil {
				return false
			}
		}
		return false
	}
}

// slowTail sends a reply up to its second text delta, waits for the
// client to reset, sends more deltas (whose relay finds the client
// gone), and ends without the rest: a truncation, so slipstream writes
// the closing events in its final flush, to a client that is gone. A
// body: half, a pause, the rest.
func slowTail(d codec.Dialect, stream bool) Handler {
	return func(r *Request, c *Conn) bool {
		if !stream {
			full := ReplyBody(d, model, Words)
			c.Head(200, "Content-Type", "application/json", "Content-Length", itoa(len(full)))
			c.Write(full[:len(full)/2])
			c.Sleep(150 * time.Millisecond)
			c.Write(full[len(full)/2:])
			return false
		}
		evs := ReplyEvents(d, model, Words)
		last := 0
		for i, ev := range evs {
			if bytes.Contains(ev, []byte(`"beta "`)) {
				last = i
				break
			}
		}
		c.Head(200, "Content-Type", "text/event-stream", "Transfer-Encoding", "chunked")
		c.Chunk(Stream(evs[:last+1]))
		c.Sleep(100 * time.Millisecond) // the client resets
		// One more delta reaches the client's socket, and finds out (a
		// Gemini translation holds one delta back: two).
		extra := 1
		if d == codec.DialectGemini {
			extra = 2
		}
		for i := 0; i < extra; i++ {
			c.Chunk(deltaEvent(d))
			c.Sleep(30 * time.Millisecond)
		}
		c.Sleep(100 * time.Millisecond)
		c.EndChunks()
		return false
	}
}

// deltaEvent is one mid-stream text delta event of dialect d.
func deltaEvent(d codec.Dialect) []byte { return textDelta(d, "more ") }

// textDelta is a mid-stream text delta event of dialect d carrying text
// (for Gemini, without a finishReason).
func textDelta(d codec.Dialect, text string) []byte {
	evs := ReplyEvents(d, model, []string{text, "x"})
	switch d {
	case codec.DialectChat:
		return evs[1]
	case codec.DialectResponses:
		return evs[4]
	case codec.DialectAnthropic:
		return evs[2]
	}
	return evs[0]
}

// refusedURL returns the URL of a loopback port nobody listens on.
func refusedURL() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func itoa(n int) string { return strconv.Itoa(n) }
