package ledger

import (
	"time"
	"unicode/utf8"
)

// MaxName is the longest model name a Record keeps, in bytes; a longer
// one is cut (at a UTF-8 boundary when it is written).
const MaxName = 96

// MaxID is the longest request id a Record keeps, in bytes.
const MaxID = 32

// Name is a model name held inside a Record, so that a record owns its
// bytes without a heap allocation: a request's model names are views into
// pooled buffers that are recycled once the request ends.
type Name struct {
	n uint8
	b [MaxName]byte
}

// Set copies b (cut to MaxName bytes).
func (n *Name) Set(b []byte) { n.n = uint8(copy(n.b[:], b)) }

// String returns a copy of the name, cut at the last whole UTF-8
// character when Set cut it.
func (n *Name) String() string { return validPrefix(n.b[:n.n], MaxName) }

// ID is a request id held inside a Record.
type ID struct {
	n uint8
	b [MaxID]byte
}

// Set copies b (cut to MaxID bytes).
func (id *ID) Set(b []byte) { id.n = uint8(copy(id.b[:], b)) }

// String returns a copy of the id.
func (id *ID) String() string { return validPrefix(id.b[:id.n], MaxID) }

// validPrefix is b as a string, cut by wholeRunes.
func validPrefix(b []byte, max int) string { return string(wholeRunes(b, max)) }

// wholeRunes is b without a trailing partial UTF-8 character when b is
// full (max bytes long, so it may have been cut).
func wholeRunes(b []byte, max int) []byte {
	if len(b) == max {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return b
}

// Transport is how the client reached slipstream.
type Transport uint8

// Transports.
const (
	HTTP Transport = iota
	WebSocket
)

// String names the transport as the ledger stores it.
func (t Transport) String() string {
	if t == WebSocket {
		return "websocket"
	}
	return "http"
}

// Record is one finished request, as the request path hands it to Add.
// It holds no secret and no content: names (the configured key,
// provider and credential names, never their secrets), counts and times.
//
// The string fields must outlive the request: constants or configuration
// strings, never views into a request's buffers (Add copies the record,
// not the bytes those strings point to). Model names and the id, which
// are views into pooled buffers on the request path, are copied into the
// record's own arrays by Name.Set and ID.Set.
type Record struct {
	Start int64 // when the request arrived, Unix microseconds
	ID    ID    // slipstream's request id (X-Slipstream-Request-Id)

	Key        string // client key name, "" without client keys
	Provider   string // provider name, "" when none was chosen
	Credential string // credential name, "" when none was used

	Model         Name // the model the client asked for
	UpstreamModel Name // the model the provider was asked for (after aliases and failover)

	ClientDialect   string // the client's dialect (codec.Dialect.String)
	UpstreamDialect string // the provider's dialect, "" when none was chosen
	Transport       Transport

	Status int32  // HTTP status sent to the client
	Cause  string // class of an upstream failure (dns, timeout, ...), or ""

	Input, Output, CacheRead, CacheWrite, Reasoning int64 // tokens
	Estimated                                       bool  // counted locally, not reported by the provider

	// CostNanoUSD is the request's cost in billionths of a US dollar,
	// meaningful when Priced; APIEquivalent marks the cost of a request
	// served by a subscription account (what the API would have charged).
	CostNanoUSD   int64
	Priced        bool
	APIEquivalent bool

	Latency  time.Duration // arrival to last byte
	TTFT     time.Duration // arrival to the first streamed event; 0: not a stream
	BytesIn  int64         // request body bytes
	BytesOut int64         // response bytes

	// Guardrails names the guardrail rules that matched the request,
	// comma separated (cut at MaxName bytes); never a matched value.
	Guardrails Name
}

// Entry is one record as read back from the ledger.
type Entry struct {
	Time            time.Time     `json:"time"`
	ID              string        `json:"id"`
	Key             string        `json:"key"`
	Provider        string        `json:"provider"`
	Credential      string        `json:"credential"`
	Model           string        `json:"model"`
	UpstreamModel   string        `json:"upstream_model"`
	ClientDialect   string        `json:"client_dialect"`
	UpstreamDialect string        `json:"upstream_dialect"`
	Transport       string        `json:"transport"`
	Status          int           `json:"status"`
	Cause           string        `json:"cause"`
	Input           int64         `json:"input_tokens"`
	Output          int64         `json:"output_tokens"`
	CacheRead       int64         `json:"cache_read_tokens"`
	CacheWrite      int64         `json:"cache_write_tokens"`
	Reasoning       int64         `json:"reasoning_tokens"`
	Estimated       bool          `json:"estimated"`
	CostNanoUSD     int64         `json:"cost_nano_usd"`
	Priced          bool          `json:"priced"`
	APIEquivalent   bool          `json:"api_equivalent"`
	Latency         time.Duration `json:"latency_ns"`
	TTFT            time.Duration `json:"ttft_ns"`
	BytesIn         int64         `json:"bytes_in"`
	BytesOut        int64         `json:"bytes_out"`
	Guardrails      string        `json:"guardrails"`
}
