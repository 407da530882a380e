// Command fastproxy is the harness's reference for what slipstream's
// stack costs before slipstream adds anything: a fasthttp server whose
// handler forwards each request to one upstream with a fasthttp client
// and streams the answer back, chunk by chunk, as it arrives. It keeps
// fasthttp's defaults (4 KiB read and write buffers, the body read whole
// before the handler) and slipstream's default collector setting (GOGC
// 10). It has no routing, auth, limits or translation. The startup and
// live workloads run it beside slipstream (docs/BENCHMARKS.md):
//
//	fastproxy -upstream URL [-listen 127.0.0.1:0]
//
// It prints "listening ADDR" once it accepts connections and stops on
// SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	upstream := flag.String("upstream", "", "upstream base URL, e.g. http://127.0.0.1:9000")
	flag.Parse()
	if *upstream == "" {
		fmt.Fprintln(os.Stderr, "fastproxy: -upstream is required")
		os.Exit(2)
	}
	debug.SetGCPercent(10)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fastproxy:", err)
		os.Exit(1)
	}
	srv := newServer(*upstream)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		srv.Shutdown() //nolint:errcheck // Serve reports the outcome
	}()
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "fastproxy:", err)
		os.Exit(1)
	}
}

// newServer returns the proxy to upstream: fasthttp's server and client,
// both with their defaults but for streaming the client's responses.
func newServer(upstream string) *fasthttp.Server {
	p := &proxy{upstream: upstream, client: &fasthttp.Client{StreamResponseBody: true, ReadTimeout: time.Minute}}
	return &fasthttp.Server{Handler: p.handle}
}

type proxy struct {
	upstream string
	client   *fasthttp.Client
}

// handle forwards the request and hands the upstream's body to fasthttp
// as the response's body stream, which it writes one flushed chunk per
// read.
func (p *proxy) handle(ctx *fasthttp.RequestCtx) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	ctx.Request.Header.CopyTo(&req.Header)
	req.SetRequestURI(p.upstream + string(ctx.RequestURI()))
	req.SetBodyRaw(ctx.Request.Body())
	if err := p.client.Do(req, resp); err != nil {
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
		ctx.Error("upstream: "+err.Error(), fasthttp.StatusBadGateway)
		return
	}
	ctx.SetStatusCode(resp.StatusCode())
	ctx.SetContentTypeBytes(resp.Header.ContentType())
	ctx.SetBodyStream(&body{req: req, resp: resp}, -1)
}

// body is the upstream's body while fasthttp copies it to the client; it
// gives the upstream request and response back when fasthttp closes it.
type body struct {
	req  *fasthttp.Request
	resp *fasthttp.Response
}

func (b *body) Read(p []byte) (int, error) { return b.resp.BodyStream().Read(p) }

func (b *body) Close() error {
	if b.resp != nil {
		fasthttp.ReleaseRequest(b.req)
		fasthttp.ReleaseResponse(b.resp)
		b.req, b.resp = nil, nil
	}
	return nil
}
