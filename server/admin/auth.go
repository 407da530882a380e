package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// Token is one named admin token.
type Token struct {
	Name   string
	Secret string
}

// tokenSet compares presented tokens in constant time: every configured
// token's digest is compared with the presented one's, so timing reveals
// neither which token matched nor how much of one.
type tokenSet struct {
	names   []string
	digests [][32]byte
}

func newTokenSet(ts []Token) tokenSet {
	var s tokenSet
	for _, t := range ts {
		s.names = append(s.names, t.Name)
		s.digests = append(s.digests, sha256.Sum256([]byte(t.Secret)))
	}
	return s
}

// has reports whether digest is one of the set's tokens'.
func (s *tokenSet) has(digest [32]byte) bool {
	for i := range s.digests {
		if s.digests[i] == digest {
			return true
		}
	}
	return false
}

// find returns the name of the token presented, or "" for none.
func (s *tokenSet) find(presented []byte) string {
	if len(presented) == 0 {
		return ""
	}
	sum := sha256.Sum256(presented)
	found := -1
	for i := range s.digests {
		if subtle.ConstantTimeCompare(sum[:], s.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return ""
	}
	return s.names[found]
}

var bearerPrefix = []byte("bearer ")

// bearer is the token of an Authorization: Bearer header, or nil.
func bearer(ctx *fasthttp.RequestCtx) []byte {
	v := ctx.Request.Header.Peek("Authorization")
	if len(v) <= len(bearerPrefix) || !bytes.EqualFold(v[:len(bearerPrefix)], bearerPrefix) {
		return nil
	}
	return bytes.TrimSpace(v[len(bearerPrefix):])
}

// sameOrigin reports whether the request comes from no page, or from a
// page of this server: its Origin, when present, must be the scheme and
// Host of the request itself, and a browser's Sec-Fetch-Site must not say
// another site sent it. Cross-origin requests get no CORS answer at all.
func sameOrigin(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	if site := h.Peek("Sec-Fetch-Site"); len(site) > 0 && !bytes.Equal(site, []byte("same-origin")) && !bytes.Equal(site, []byte("none")) {
		return false
	}
	origin := h.Peek("Origin")
	if len(origin) == 0 {
		return true
	}
	scheme := "http://"
	if ctx.IsTLS() {
		scheme = "https://"
	}
	host := h.Host()
	return len(origin) == len(scheme)+len(host) &&
		bytes.EqualFold(origin[:len(scheme)], []byte(scheme)) &&
		bytes.EqualFold(origin[len(scheme):], host)
}

// loopbackHost reports whether a Host header value names this machine's
// loopback: empty (HTTP/1.0), localhost or a name under .localhost (which
// browsers resolve to loopback themselves), or a loopback IP literal. A
// page that rebinds its own DNS name to 127.0.0.1 sends its own name, so
// without admin tokens this is what keeps such a page out whatever
// allowed_hosts says.
func loopbackHost(host []byte) bool {
	if len(host) == 0 {
		return true
	}
	name := string(host)
	if h, port, err := net.SplitHostPort(name); err == nil {
		if _, err := netip.ParseAddrPort("127.0.0.1:" + port); err != nil {
			return false
		}
		name = h
	} else if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		name = name[1 : len(name)-1]
	}
	if n := strings.ToLower(name); n == "localhost" || strings.HasSuffix(n, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(name)
	return err == nil && a.IsLoopback()
}
