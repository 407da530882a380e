package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/valyala/fasthttp"
)

// Cause is the class of a failed upstream call: what an operator checks
// first. The zero value is CauseOther.
type Cause uint8

// Causes, from the failure of the first step to the last.
const (
	CauseOther          Cause = iota // none of the below
	CauseDNS                         // the provider's host name did not resolve
	CauseRefused                     // nothing listens at the provider's address
	CauseConnectTimeout              // the connection (or TLS, or proxy tunnel) took longer than timeouts.connect
	CauseProxy                       // the outbound proxy refused or failed the tunnel
	CauseTLS                         // the TLS handshake failed (certificate, protocol)
	CausePoolFull                    // every connection to the provider is busy
	CauseReset                       // the connection was reset or closed before the response
	CauseTimeout                     // no response within timeouts.first_byte, or a silence longer than timeouts.idle
	CauseEncoding                    // a compressed event stream, which cannot be framed
	CauseHeadTooLarge                // response headers over MaxHead
)

var causeNames = [...]string{
	CauseOther:          "other",
	CauseDNS:            "dns",
	CauseRefused:        "refused",
	CauseConnectTimeout: "connect_timeout",
	CauseProxy:          "proxy",
	CauseTLS:            "tls",
	CausePoolFull:       "pool_full",
	CauseReset:          "reset",
	CauseTimeout:        "timeout",
	CauseEncoding:       "encoding",
	CauseHeadTooLarge:   "head_too_large",
}

var causeTexts = [...]string{
	CauseOther:          "is unreachable",
	CauseDNS:            "is unreachable: DNS lookup of its host failed",
	CauseRefused:        "is unreachable: connection refused",
	CauseConnectTimeout: "is unreachable: connecting timed out (timeouts.connect)",
	CauseProxy:          "is unreachable: the outbound proxy failed",
	CauseTLS:            "is unreachable: TLS handshake failed",
	CausePoolFull:       "has no free connection: all of them are busy (limits.upstream_conns)",
	CauseReset:          "reset the connection before answering",
	CauseTimeout:        "timed out (timeouts.first_byte or timeouts.idle)",
	CauseEncoding:       "sent a compressed event stream although asked for identity encoding",
	CauseHeadTooLarge:   "answered with response headers over 4 KiB",
}

// String is the cause's short name for logs (cause=dns).
func (c Cause) String() string { return causeNames[c] }

// Text completes "provider NAME ..." for the client's error message.
func (c Cause) Text() string { return causeTexts[c] }

// Status is the HTTP status the client gets: 504 for timeouts, 503 for a
// full pool (slipstream's own limit, worth retrying soon), 502 otherwise.
func (c Cause) Status() int {
	switch c {
	case CauseTimeout, CauseConnectTimeout:
		return fasthttp.StatusGatewayTimeout
	case CausePoolFull:
		return fasthttp.StatusServiceUnavailable
	}
	return fasthttp.StatusBadGateway
}

// Classify returns the cause of a failed upstream call.
func Classify(err error) Cause {
	if err == nil {
		return CauseOther
	}
	if errors.Is(err, fasthttp.ErrNoFreeConns) {
		return CausePoolFull
	}
	if errors.Is(err, ErrEncodedStream) {
		return CauseEncoding
	}
	var small *fasthttp.ErrSmallBuffer
	if errors.As(err, &small) {
		return CauseHeadTooLarge
	}
	var de *DialError
	if errors.As(err, &de) {
		return classifyDial(de)
	}
	if IsTimeout(err) {
		return CauseTimeout
	}
	if isReset(err) {
		return CauseReset
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return CauseDNS
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return CauseRefused
	}
	return CauseOther
}

func classifyDial(de *DialError) Cause {
	var dns *net.DNSError
	switch {
	case IsTimeout(de.Err):
		return CauseConnectTimeout
	case de.Stage == StageProxy:
		return CauseProxy
	case errors.As(de.Err, &dns):
		return CauseDNS
	case errors.Is(de.Err, syscall.ECONNREFUSED):
		return CauseRefused
	case de.Stage == StageTLS || isTLSError(de.Err):
		return CauseTLS
	case isReset(de.Err):
		return CauseReset
	}
	return CauseOther
}

func isReset(err error) bool {
	return errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

func isTLSError(err error) bool {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	var ve *tls.CertificateVerificationError
	return errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) ||
		errors.As(err, &rh) || errors.As(err, &ae) || errors.As(err, &ve)
}
