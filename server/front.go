package server

import (
	"bytes"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/config"
)

// frontDoor decides, from a request's Host and Origin headers alone,
// whether a browser page could have sent it against the user's will. It
// is built once per configuration; its checks allocate nothing on a
// request that passes.
//
//   - Host must be empty (HTTP/1.0), a loopback name (localhost or a name
//     under .localhost, which browsers resolve to loopback themselves), an
//     IP literal, or a name in allowed_hosts. A page that rebinds its own
//     DNS name to 127.0.0.1 sends that name, and is refused.
//   - Origin, when present, must be in cors.allowed_origins: slipstream
//     serves no page, so an Origin always names another site's page.
//     Listed origins get CORS headers and their preflights a 204.
type frontDoor struct {
	anyHost    bool
	hosts      []string // lowercase names
	subdomains []string // lowercase ".example.com" of "*.example.com"
	anyOrigin  bool
	origins    []string
	maxAge     string
}

func newFrontDoor(cfg *config.Config) frontDoor {
	f := frontDoor{maxAge: strconv.Itoa(cfg.CORS.MaxAge)}
	for _, h := range cfg.AllowedHosts {
		h = strings.ToLower(h)
		switch {
		case h == "*":
			f.anyHost = true
		case strings.HasPrefix(h, "*."):
			f.subdomains = append(f.subdomains, h[1:])
		default:
			f.hosts = append(f.hosts, h)
		}
	}
	for _, o := range cfg.CORS.AllowedOrigins {
		if o == "*" {
			f.anyOrigin = true
			continue
		}
		f.origins = append(f.origins, strings.TrimSuffix(o, "/"))
	}
	return f
}

// noteHostNames logs, for a listener other hosts can reach and no
// allowed_hosts, that a request naming it by a host name is refused: a
// deployment behind a load balancer learns it at start, not from its
// clients' 403s.
func (s *Server) noteHostNames(ln net.Listener) {
	f := &s.current.Load().front
	if f.anyHost || len(f.hosts)+len(f.subdomains) > 0 || config.IsLoopback(ln.Addr().String()) {
		return
	}
	s.log.Printf("note: requests to %s that name it by a host name (not an IP address or localhost) get 403 unless allowed_hosts lists the name", ln.Addr())
}

// hostAllowed reports whether a Host header value passes (see frontDoor).
func (f *frontDoor) hostAllowed(host []byte) bool {
	if len(host) == 0 || f.anyHost {
		return true
	}
	name, ok := hostName(host)
	if !ok {
		return false
	}
	if isLoopbackName(name) || f.listedHost(name) {
		return true
	}
	if host[0] == '[' {
		a, err := netip.ParseAddr(pool.B2S(name))
		return err == nil && a.Is6()
	}
	if c := name[0]; c < '0' || c > '9' {
		return false // a name, not an IPv4 literal
	}
	a, err := netip.ParseAddr(pool.B2S(name))
	return err == nil && a.Is4()
}

// hostName is the host of a Host header value, without its port and the
// brackets of an IPv6 literal. The view is into host.
func hostName(host []byte) ([]byte, bool) {
	if host[0] == '[' {
		end := bytes.IndexByte(host, ']')
		if end < 0 || !isPort(host[end+1:]) {
			return nil, false
		}
		return host[1:end], end > 1
	}
	name, _, _ := bytes.Cut(host, []byte{':'})
	if !isPort(host[len(name):]) {
		return nil, false
	}
	return name, len(name) > 0
}

// isPort reports whether p is empty or ":digits".
func isPort(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	if p[0] != ':' || len(p) == 1 {
		return false
	}
	for _, c := range p[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var localhost = "localhost"

// isLoopbackName reports whether name is localhost or a name under
// .localhost (RFC 6761 section 6.3), in any case.
func isLoopbackName(name []byte) bool {
	n := len(localhost)
	if len(name) < n || !equalFoldASCII(name[len(name)-n:], localhost) {
		return false
	}
	return len(name) == n || name[len(name)-n-1] == '.' && len(name) > n+1
}

func (f *frontDoor) listedHost(name []byte) bool {
	for _, h := range f.hosts {
		if equalFoldASCII(name, h) {
			return true
		}
	}
	for _, d := range f.subdomains {
		if len(name) > len(d) && equalFoldASCII(name[len(name)-len(d):], d) {
			return true
		}
	}
	return false
}

// originAllowed reports whether a page of origin may call slipstream.
func (f *frontDoor) originAllowed(origin []byte) bool {
	if f.anyOrigin {
		return true
	}
	for _, o := range f.origins {
		if equalFoldASCII(origin, o) {
			return true
		}
	}
	return false
}

func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// admitFront runs the front door's checks on a request. It reports false
// when it has answered: a refusal (403 in the dialect of the path, the
// connection closed, the body unread) or a preflight's 204. A listed
// origin's request gets its CORS headers here and goes on.
func (s *Server) admitFront(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	if !s.front.hostAllowed(h.Host()) {
		s.refuseFront(ctx, "Host "+strconv.Quote(clipString(h.Host()))+" is not a loopback name or IP address; list it in allowed_hosts to serve it")
		return false
	}
	origin := h.Peek("Origin")
	if len(origin) == 0 {
		return true
	}
	if !s.front.originAllowed(origin) {
		s.refuseFront(ctx, "requests from web pages are refused unless their origin is listed in cors.allowed_origins (Origin "+strconv.Quote(clipString(origin))+")")
		return false
	}
	r := &ctx.Response.Header
	r.SetBytesV("Access-Control-Allow-Origin", origin)
	r.Add("Vary", "Origin")
	if ctx.IsOptions() && len(h.Peek("Access-Control-Request-Method")) > 0 {
		s.preflight(ctx)
		return false
	}
	r.Set("Access-Control-Expose-Headers", "*")
	return true
}

// preflight answers a listed origin's CORS preflight (OPTIONS with
// Access-Control-Request-Method) with 204: the path's methods, the
// headers the browser asked for, and how long it may cache the answer.
func (s *Server) preflight(ctx *fasthttp.RequestCtx) {
	r := &ctx.Response.Header
	methods := allowedMethods(ctx.Path())
	if methods == "" {
		methods = "GET, HEAD, POST"
	}
	r.Set("Access-Control-Allow-Methods", methods)
	if hs := ctx.Request.Header.Peek("Access-Control-Request-Headers"); len(hs) > 0 {
		r.SetBytesV("Access-Control-Allow-Headers", hs)
	}
	r.Set("Access-Control-Max-Age", s.front.maxAge)
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// refuseFront answers 403 in the dialect of the path, logged like any
// answered request, and closes the connection without reading the body.
func (s *Server) refuseFront(ctx *fasthttp.RequestCtx, msg string) {
	id, start := s.begin(ctx)
	rt, _, _ := match(ctx.Method(), ctx.Path())
	d := dialectOfPath(ctx)
	closeUnread(ctx)
	s.writeError(ctx, d, fasthttp.StatusForbidden, msg)
	s.answered(ctx, rt, d, nil, id, start)
}

// jsonContentType reports whether a Content-Type value is JSON:
// application/json or application/*+json, with any parameters.
func jsonContentType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	const app = "application/"
	if len(ct) <= len(app) || !equalFoldASCII(ct[:len(app)], app) {
		return false
	}
	sub := ct[len(app):]
	return equalFoldASCII(sub, "json") || len(sub) > 5 && equalFoldASCII(sub[len(sub)-5:], "+json")
}

// refuseContentType answers 415 to a POST whose body is not declared
// JSON, and reports whether it did: a browser sends a cross-site form or
// text/plain POST without a preflight, and no client of these APIs sends
// anything but JSON.
func (s *Server) refuseContentType(ctx *fasthttp.RequestCtx, rt *route, d codec.Dialect) bool {
	if rt.method != fasthttp.MethodPost || jsonContentType(ctx.Request.Header.ContentType()) {
		return false
	}
	closeUnread(ctx)
	s.writeError(ctx, d, fasthttp.StatusUnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
	return true
}
