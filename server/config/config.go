// Package config holds slipstream's configuration schema, its loading from
// YAML with ${ENV} expansion, and its validation with YAML paths and line
// numbers. The zero value of every optional field is documented next to it.
package config

import (
	"fmt"
	"time"
)

// Config is the whole of slipstream.yaml.
type Config struct {
	// Listen is the address to serve on. Default 127.0.0.1:8317. The
	// -listen flag and SLIPSTREAM_LISTEN override it.
	Listen string `yaml:"listen"`
	// TLS, when set, serves HTTPS on Listen. Default: plain HTTP.
	TLS TLS `yaml:"tls"`
	// Keys are the client keys. None means no client authentication, which
	// is refused unless Listen is a loopback address.
	Keys []Key `yaml:"keys"`
	// Providers serve models; among those whose patterns match a model,
	// one speaking the client's dialect wins, else the first in file order.
	Providers []Provider `yaml:"providers"`
	// Aliases map a client-facing model name to "provider/model".
	Aliases map[string]string `yaml:"aliases"`
	Limits  Limits            `yaml:"limits"`
	// Timeouts bound each phase of an upstream call.
	Timeouts Timeouts `yaml:"timeouts"`
	// Log configures the access log.
	Log Log `yaml:"log"`
	// Fallbacks name, per client-facing model, the "provider/model"
	// targets tried in order when every credential of every provider
	// serving the model failed or is cooling down (translated as needed).
	Fallbacks map[string][]string `yaml:"fallbacks"`
	// Failover bounds retries across credentials, providers and
	// fallbacks, and sets the cooldowns (see failover.go).
	Failover Failover `yaml:"failover"`
	// Metrics configures GET /metrics.
	Metrics Metrics `yaml:"metrics"`
	// Redis, when its url is set, shares rate-limit windows, budgets,
	// cooldowns and usage totals across replicas. Default: all state stays
	// in the process.
	Redis Redis `yaml:"redis"`
	// AccountsDir holds subscription account files, one NAME.json each
	// (mode 0600), written by `slipstream login`. Default
	// ~/.slipstream/accounts.
	AccountsDir string `yaml:"accounts_dir"`
	// Accounts tunes subscription accounts (see accounts.go).
	Accounts Accounts `yaml:"accounts"`
	// AllowedHosts are the host names, besides loopback names
	// (localhost, *.localhost) and IP literals, that a request's Host
	// header may carry (matched without the port); "*.example.com" takes
	// every subdomain, "*" any host. It shuts out DNS rebinding: a page on
	// a name that resolves to this machine. Default: none.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// CORS lists the browser origins that may call slipstream (front.go).
	CORS CORS `yaml:"cors"`
	// ForwardHeaders are client headers forwarded upstream besides those
	// of each dialect's own list (see server/upstream/headers.go): names,
	// or prefixes ending in "*" ("x-my-*"). Client credentials and
	// hop-by-hop headers are never forwarded. Default: none.
	ForwardHeaders []string `yaml:"forward_headers"`
	// Prices override or add to the price table built into slipstream,
	// which prices every request's cost (prices.go). Default: none.
	Prices []Price `yaml:"prices"`
	// Admin configures the management API and the console (admin.go).
	Admin Admin `yaml:"admin"`
	// Usage configures the usage ledger (usage.go). Default: on, in an
	// SQLite file in the user's state directory.
	Usage Usage `yaml:"usage"`
	// Guardrails find secrets and personal data in requests and redact,
	// block or count them (guardrails.go, docs/GUARDRAILS.md). Default
	// off.
	Guardrails Guardrails `yaml:"guardrails"`
}

// Metrics configures the Prometheus endpoint, GET /metrics.
type Metrics struct {
	// Token, when set, is the bearer token a scrape must send
	// (Authorization: Bearer TOKEN). Default: /metrics is open, like
	// /healthz; it shows key and model names, never a secret.
	Token string `yaml:"token" secret:"true"`
}

// Redis names the server that replicas share state through.
type Redis struct {
	// URL is redis://[user:password@]host:port[/db] (rediss:// for TLS).
	// Never printed. Default: none, state stays in the process.
	URL string `yaml:"url" secret:"true"`
	// Prefix starts every key slipstream writes, so replicas of different
	// deployments can share one server. Default "slipstream".
	Prefix string `yaml:"prefix"`
}

// Key is one client key and its policy.
type Key struct {
	// Name identifies the key in logs; the key itself is never logged.
	Name string `yaml:"name"`
	// Key is the secret the client sends (Authorization: Bearer, x-api-key
	// or x-goog-api-key). It is never printed (check -print redacts it).
	Key string `yaml:"key" secret:"true"`
	// KeySHA256 is the hex SHA-256 digest of the key, for a file that
	// must not hold the secret itself (`printf %s "$KEY" | sha256sum`).
	// Set Key or KeySHA256, not both.
	KeySHA256 string `yaml:"key_sha256"`
	// Models are glob patterns of model names this key may use. Default
	// ["*"].
	Models []string `yaml:"models"`
	// RPM caps requests per minute (a token bucket of RPM requests
	// refilled evenly over a minute). Default 0: no cap.
	RPM int64 `yaml:"rpm"`
	// TPM caps tokens per minute (input + output): a request is admitted
	// while what the key used and reserved in the window is below TPM,
	// reserves its counted input plus its max_tokens (4096 when unset),
	// and is settled to its real usage when it ends. Default 0: no cap.
	TPM int64 `yaml:"tpm"`
	// Budget caps the tokens (input + output) used per Period, with TPM's
	// reservations. Default 0: no budget.
	Budget int64 `yaml:"budget"`
	// BudgetUSD caps the key's spend in dollars per Period, priced by the
	// model that served each request (prices.go), with TPM's
	// reservations; a key with one is refused models that have no price.
	// Default 0: no money budget.
	BudgetUSD USD `yaml:"budget_usd"`
	// Period is the period of Budget and BudgetUSD, daily (default) or
	// monthly, in UTC.
	Period string `yaml:"period"`
	// CountTokensExempt exempts the key's token count requests
	// (count_tokens, input_tokens, countTokens) from its RPM. Default
	// false: each counts against RPM like any request.
	CountTokensExempt bool `yaml:"count_tokens_exempt"`
}

// Provider kinds.
const (
	KindAnthropic = "anthropic"
	KindOpenAI    = "openai"
	KindGemini    = "gemini"
	KindMock      = "mock"
)

// OpenAI upstream APIs.
const (
	APIChat      = "chat"
	APIResponses = "responses"
)

// Provider is one upstream.
type Provider struct {
	Name string `yaml:"name"`
	// Kind is anthropic, openai (also any OpenAI-compatible server), gemini
	// or mock.
	Kind string `yaml:"kind"`
	// API is which OpenAI API an openai upstream speaks: chat (default) or
	// responses.
	API string `yaml:"api"`
	// BaseURL defaults to the vendor's public endpoint:
	// https://api.anthropic.com, https://api.openai.com/v1,
	// https://generativelanguage.googleapis.com.
	BaseURL string `yaml:"base_url"`
	// Keys are the provider's credentials: each a string (the secret) or
	// {key, name, weight}. Only names reach logs; secrets are never
	// printed. They may be left out for kind openai with a base_url of
	// its own (a local OpenAI-compatible server such as Ollama or vLLM):
	// then no Authorization header is sent.
	// (secret:"inside": values below are never quoted in a problem;
	// check -print redacts only the key itself.)
	Keys []ProviderKey `yaml:"keys" secret:"inside"`
	// Strategy picks among the credentials: round-robin (default),
	// fill-first (the first usable one in file order) or weighted
	// (round-robin in proportion to each key's weight); account kinds
	// also take soonest-reset.
	Strategy string `yaml:"strategy"`
	// Affinity keeps one conversation on one credential, so the
	// provider's prompt cache stays warm: the conversation is named by
	// AffinityHeader when set, else Claude Code's
	// x-claude-code-session-id or metadata.user_id, or Codex's
	// session-id / session_id header or prompt_cache_key. A cooling
	// credential is skipped as usual. Default false.
	Affinity bool `yaml:"affinity"`
	// Accounts are the names or globs of accounts under accounts_dir a
	// claude-account, codex-account or gemini-account provider pools.
	Accounts []string `yaml:"accounts"`
	// AffinityHeader is a request header naming the conversation.
	AffinityHeader string `yaml:"affinity_header"`
	// Models are the client-facing model names served here: exact names
	// or glob patterns (* and ?). An exact name wins over any pattern; a
	// more specific pattern wins over a less specific one (README,
	// "Model names").
	Models []string `yaml:"models"`
	// ListModels makes GET /v1/models list the models this provider's
	// upstream lists (its own GET /models, fetched at start and every 10
	// minutes, filtered by Models). Default false: for patterns, the
	// well-known names Claude Code, Codex and Gemini clients send are
	// listed when a pattern matches them.
	ListModels bool `yaml:"list_models"`
	// Headers are extra request headers sent to this provider on every
	// request (e.g. an organization or project header, or the auth header
	// of a gateway). Their values are never logged or printed. They
	// replace a client header of the same name; the provider credential is
	// set after them. Default none.
	Headers map[string]string `yaml:"headers" secret:"true"`
	// Proxy is how this provider is reached: empty (default) follows the
	// HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment variables as Go's
	// net/http does (loopback hosts are never proxied); "direct" ignores
	// them; an http://[user:pass@]host:port URL tunnels through that HTTP
	// proxy with CONNECT; a socks5://[user:pass@]host:port URL goes
	// through that SOCKS5 proxy. Never printed (it may hold a password).
	Proxy string `yaml:"proxy" secret:"true"`
	// CountTokens is "local" (default: counted by slipstream's tokenizer)
	// or "upstream" (anthropic and gemini only: forwarded).
	CountTokens string `yaml:"count_tokens"`

	// Reply is the mock provider's text answer. Default "Hello from the
	// slipstream mock provider."
	Reply string `yaml:"reply"`
	// Chunks is how many stream deltas the mock splits its reply into.
	// Default 4.
	Chunks int `yaml:"chunks"`
	// ChunkDelay is the mock's pause between stream deltas. Default 0.
	ChunkDelay Duration `yaml:"chunk_delay"`
}

// Limits bound what one process takes on.
type Limits struct {
	// MaxBodyBytes is the largest request body accepted. Default 64 MiB.
	MaxBodyBytes Size `yaml:"max_body_bytes"`
	// MaxConcurrent is the number of requests in flight; over it: 429.
	// Default 4096.
	MaxConcurrent int `yaml:"max_concurrent"`
	// UpstreamConns is the most connections slipstream opens to each
	// provider at once; a request that finds them all busy waits up to
	// timeouts.connect for one and then gets 503. Default max_concurrent.
	UpstreamConns int `yaml:"upstream_conns"`
	// MaxBytesInFlight caps the sum of request bodies being handled and of
	// whole upstream answers held until their clients read them; over it:
	// 429. Default: a quarter of the process's memory limit
	// (GOMEMLIMIT, else the cgroup memory limit; see memory.go for why a
	// quarter), or no cap when there is no limit.
	MaxBytesInFlight Size `yaml:"max_bytes_in_flight"`
	// GCPercent is the Go garbage collector's GOGC: how far the heap may
	// grow past the live data before a collection. slipstream's live heap
	// is mostly request bodies, which hold no pointers and cost the
	// collector almost nothing, so a low value keeps RSS near the bytes in
	// flight cheaply (make bench: GOGC 10 against 25 changed no CPU figure
	// and cut the soak peak from 60 to 53 MB). A GOGC environment variable
	// overrides it. Default 10.
	GCPercent int `yaml:"gc_percent"`
	// WSStateBytes bounds the conversation state the Responses WebSocket
	// transport keeps, summed over all connections: each connection holds
	// the transcript of its last completed response (the request body it
	// sent upstream plus the response's output items) so that the next
	// frame can send only new items. Past the bound the least recently
	// used transcripts are dropped; a frame chaining on a dropped one is
	// answered previous_response_not_found and Codex resends the whole
	// input. Default 64 MiB.
	WSStateBytes Size `yaml:"ws_state_bytes"`
	// WSConnections caps open Responses WebSocket connections; past it an
	// upgrade is answered 426 Upgrade Required, on which Codex uses HTTP
	// for the rest of its session. Default 1024.
	WSConnections int `yaml:"ws_connections"`
}

// Timeouts bound each phase of an upstream call.
type Timeouts struct {
	// Connect bounds dialing an upstream. Default 10s.
	Connect Duration `yaml:"connect"`
	// FirstByte bounds the wait from sending a request to the first
	// upstream byte. Default 10m.
	FirstByte Duration `yaml:"first_byte"`
	// Idle is the longest silence inside a stream. Default 5m.
	Idle Duration `yaml:"idle"`
	// UpstreamIdleConn is how long an idle upstream connection is kept for
	// reuse. It must stay below the upstream's own keep-alive timeout
	// (uvicorn, vLLM and Node close idle connections after 5s), or a
	// request meets a connection the upstream is closing; such a request
	// is retried once on a fresh connection anyway. Default 2s.
	UpstreamIdleConn Duration `yaml:"upstream_idle_conn"`
	// Keepalive is the interval of SSE comments sent while a streamed
	// request waits for the upstream's first byte; 0 turns them off.
	// Default 15s.
	Keepalive *Duration `yaml:"keepalive"`
	// Shutdown is how long in-flight requests may run after SIGTERM.
	// Default 30s.
	Shutdown Duration `yaml:"shutdown"`
	// HeaderRead bounds reading a request from its first byte: its head
	// and, as fasthttp's ReadTimeout, a body the client sends with it.
	// Default 5m.
	HeaderRead Duration `yaml:"header_read"`
	// Write bounds a write to a client that makes no progress (a client
	// that stopped reading), as nginx's send_timeout: past it, the
	// response ends, its upstream request is closed and its slot freed.
	// Default 60s.
	Write Duration `yaml:"write"`
	// WSPing is the interval of pings on Responses WebSocket connections,
	// which keep idle sockets open through proxies and find dead peers.
	// Default 20s.
	WSPing Duration `yaml:"ws_ping"`
}

// TLS names the certificate and key slipstream serves HTTPS with. Both
// files are PEM; a changed file is picked up without a restart.
type TLS struct {
	// CertFile is the certificate chain, leaf first.
	CertFile string `yaml:"cert_file"`
	// KeyFile is the private key of the leaf certificate.
	KeyFile string `yaml:"key_file"`
}

// Enabled reports whether HTTPS is configured.
func (t *TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Log configures logging.
type Log struct {
	// Access turns on one line per request on stderr (log/slog), refused
	// requests included: request id, key name, route, dialect, provider,
	// credential name, models, status, tokens, latency, time to first
	// token, bytes, attempts and the cause of an upstream failure. Never a
	// secret. Default false.
	Access bool `yaml:"access"`
	// Format of the log: text (default: key=value access lines, plain
	// messages) or json (every line one JSON object: access lines, the
	// start-up summary, reloads, upstream errors, TLS messages). The
	// access log follows a reload; other lines keep the format read at
	// start.
	Format string `yaml:"format"`
}

// Duration is a time.Duration written in YAML as "10s", "5m", "1h".
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalText parses a duration such as "15s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("cannot parse duration %q (want e.g. 10s, 5m)", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// KeepaliveInterval returns the keep-alive interval with its default.
func (t *Timeouts) KeepaliveInterval() time.Duration {
	if t.Keepalive == nil {
		return 15 * time.Second
	}
	return t.Keepalive.D()
}
