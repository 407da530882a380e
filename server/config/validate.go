package config

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// Defaults, documented on the fields they fill.
const (
	DefaultListen        = "127.0.0.1:8317"
	DefaultMaxBodyBytes  = 64 << 20
	DefaultMaxConcurrent = 4096
	DefaultMockReply     = "Hello from the slipstream mock provider."
	DefaultMockChunks    = 4
	DefaultGCPercent     = 10
	DefaultWSStateBytes  = 64 << 20
	DefaultWSConnections = 1024
	// DefaultUpstreamIdleConn is timeouts.upstream_idle_conn's default:
	// well under the 5s after which common servers close idle connections.
	DefaultUpstreamIdleConn = Duration(2e9)
	// ProxyDirect is the provider proxy value that ignores the proxy
	// environment variables.
	ProxyDirect = "direct"
)

var defaultBaseURLs = map[string]string{
	KindAnthropic: "https://api.anthropic.com",
	KindOpenAI:    "https://api.openai.com/v1",
	KindGemini:    "https://generativelanguage.googleapis.com",
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Limits.MaxBodyBytes == 0 {
		c.Limits.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Limits.MaxConcurrent == 0 {
		c.Limits.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.Limits.GCPercent == 0 {
		c.Limits.GCPercent = DefaultGCPercent
	}
	if c.Limits.MaxBytesInFlight == 0 {
		c.Limits.MaxBytesInFlight = DerivedBytesInFlight(MemoryLimit())
	}
	if c.Limits.WSStateBytes == 0 {
		c.Limits.WSStateBytes = DefaultWSStateBytes
	}
	if c.Limits.WSConnections == 0 {
		c.Limits.WSConnections = DefaultWSConnections
	}
	if c.Limits.UpstreamConns == 0 && c.Limits.MaxConcurrent > 0 {
		c.Limits.UpstreamConns = c.Limits.MaxConcurrent
	}
	c.Timeouts.applyDefaults()
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if c.Redis.Prefix == "" {
		c.Redis.Prefix = "slipstream"
	}
	for i := range c.Keys {
		if len(c.Keys[i].Models) == 0 {
			c.Keys[i].Models = []string{"*"}
		}
		if (c.Keys[i].Budget > 0 || c.Keys[i].BudgetUSD > 0) && c.Keys[i].Period == "" {
			c.Keys[i].Period = PeriodDaily
		}
	}
	for i := range c.Providers {
		c.Providers[i].applyDefaults()
	}
	c.Failover.applyDefaults()
	c.CORS.applyDefaults()
	c.applyAccountDefaults()
	c.Usage.applyDefaults()
}

func (t *Timeouts) applyDefaults() {
	def := func(d *Duration, v Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.Connect, Duration(10e9))
	def(&t.FirstByte, Duration(600e9))
	def(&t.Idle, Duration(300e9))
	def(&t.Shutdown, Duration(30e9))
	if t.Keepalive == nil {
		k := Duration(15e9)
		t.Keepalive = &k
	}
	def(&t.WSPing, Duration(20e9))
	def(&t.HeaderRead, Duration(300e9))
	def(&t.Write, Duration(60e9))
	def(&t.UpstreamIdleConn, DefaultUpstreamIdleConn)
}

func (p *Provider) applyDefaults() {
	if p.BaseURL == "" {
		p.BaseURL = defaultBaseURLs[p.Kind]
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	if p.Kind == KindOpenAI && p.API == "" {
		p.API = APIChat
	}
	if p.CountTokens == "" {
		p.CountTokens = "local"
	}
	p.applyKeyDefaults()
	if p.Kind == KindMock {
		if p.Reply == "" {
			p.Reply = DefaultMockReply
		}
		if p.Chunks == 0 {
			p.Chunks = DefaultMockChunks
		}
	}
}

// Validate returns every problem with c (lines not yet filled in).
func (c *Config) Validate() Problems {
	var ps Problems
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if err := checkListen(c.Listen); err != nil {
		add("listen", "%v", err)
	} else if len(c.Keys) == 0 && !IsLoopback(c.Listen) {
		add("keys", "no client keys: refusing to serve %s without authentication (listen on a loopback address or add keys)", c.Listen)
	}
	c.TLS.validate(add)
	c.validateKeys(add)
	c.validateProviders(add)
	c.validateAliases(add)
	c.Limits.validate(add)
	c.Timeouts.validate(add)
	c.Failover.validate(add)
	c.validateAccounts(add)
	c.validateFallbacks(add)
	c.validateFront(add)
	c.validatePrices(add)
	c.validateAdmin(add)
	c.Usage.validate(add)
	c.validateGuardrails(add)
	if f := c.Log.Format; f != "" && f != "text" && f != "json" {
		add("log.format", "unknown format %q (want text or json)", f)
	}
	if u := c.Redis.URL; u != "" && !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") && !strings.HasPrefix(u, "unix://") {
		add("redis.url", "want redis://host:port, rediss://host:port or unix:///path")
	}
	return ps
}

func (c *Config) validateKeys(add func(string, string, ...any)) {
	seen := map[string]bool{}
	names := map[string]bool{}
	for i, k := range c.Keys {
		path := fmt.Sprintf("keys[%d]", i)
		if k.KeySHA256 == "" {
			checkSecret(path+".key", k.Key, add)
		}
		k.validatePolicy(path, add)
		if seen[k.Key] && k.Key != "" {
			add(path+".key", "the same key is listed twice (key %q)", k.Name)
		}
		seen[k.Key] = true
		if k.Name != "" && names[k.Name] {
			add(path+".name", "duplicate key name %q", k.Name)
		}
		names[k.Name] = true
		checkPatterns(path+".models", k.Models, add)
	}
}

// checkSecret reports an empty key, or one with spaces around it (a
// copy-paste slip: clients trim what they send, so it would never match).
func checkSecret(path, v string, add func(string, string, ...any)) {
	switch {
	case strings.TrimSpace(v) == "":
		add(path, "empty key")
	case strings.TrimSpace(v) != v:
		add(path, "the key has spaces or line breaks around it")
	}
}

func checkPatterns(path string, pats []string, add func(string, string, ...any)) {
	for j, m := range pats {
		if strings.TrimSpace(m) == "" {
			add(fmt.Sprintf("%s[%d]", path, j), "empty model pattern")
		}
	}
}

// checkListen accepts host:port with a numeric port 0-65535 (0: any free
// port); an empty host means every interface.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port, got %q", clip(addr))
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", clip(port))
	}
	return nil
}

func (t *TLS) validate(add func(string, string, ...any)) {
	if !t.Enabled() {
		return
	}
	if t.CertFile == "" {
		add("tls.cert_file", "missing (tls needs both cert_file and key_file)")
	}
	if t.KeyFile == "" {
		add("tls.key_file", "missing (tls needs both cert_file and key_file)")
	}
	if t.CertFile == "" || t.KeyFile == "" {
		return
	}
	if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
		add("tls.cert_file", "cannot load the certificate and key: %v", err)
	}
}

// Limits and timeouts are counts, sizes and durations: none may be
// negative. The check walks the struct, so a field added later is covered
// without a line here.
func (l *Limits) validate(add func(string, string, ...any)) {
	checkNotNegative("limits", reflect.ValueOf(l).Elem(), add)
}

func (t *Timeouts) validate(add func(string, string, ...any)) {
	checkNotNegative("timeouts", reflect.ValueOf(t).Elem(), add)
}

// checkNotNegative reports every negative integer, Size or Duration field
// of the struct v (pointers followed), by its YAML name under prefix.
func checkNotNegative(prefix string, v reflect.Value, add func(string, string, ...any)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		switch {
		case name == "" || name == "-":
		case f.Type() == reflect.TypeOf(Duration(0)):
			if d := Duration(f.Int()); d < 0 {
				add(prefix+"."+name, "must not be negative, got %s", d.D())
			}
		case f.CanInt() && f.Int() < 0:
			add(prefix+"."+name, "must not be negative, got %d", f.Int())
		}
	}
}

func (c *Config) validateProviders(add func(string, string, ...any)) {
	if len(c.Providers) == 0 {
		add("providers", "no providers")
	}
	names := map[string]bool{}
	for i := range c.Providers {
		p := &c.Providers[i]
		path := fmt.Sprintf("providers[%d]", i)
		if p.Name == "" {
			add(path+".name", "missing name")
		} else if names[p.Name] {
			add(path+".name", "duplicate provider name %q", p.Name)
		}
		names[p.Name] = true
		p.validate(path, add)
	}
}

func (p *Provider) validate(path string, add func(string, string, ...any)) {
	switch p.Kind {
	case KindAnthropic, KindOpenAI, KindGemini:
		if len(p.Keys) == 0 && !p.keysOptional() {
			add(path+".keys", "a %s provider needs at least one key (only kind openai with a base_url of its own may have none)", p.Kind)
		}
		p.validateKeys(path, add)
		checkBaseURL(path+".base_url", p.BaseURL, add)
		p.validateUpstream(path, add)
	case KindClaudeAccount, KindCodexAccount, KindGeminiAccount:
		p.validateAccount(path, add)
	case KindMock:
		if p.Chunks < 0 {
			add(path+".chunks", "must not be negative, got %d", p.Chunks)
		}
		if p.ChunkDelay < 0 {
			add(path+".chunk_delay", "must not be negative, got %s", p.ChunkDelay.D())
		}
	case "":
		add(path+".kind", "missing kind (anthropic, openai, gemini, claude-account, codex-account, gemini-account or mock)")
	default:
		add(path+".kind", "unknown kind %q (want anthropic, openai, gemini, claude-account, codex-account, gemini-account or mock)", p.Kind)
	}
	if p.Kind == KindOpenAI && p.API != APIChat && p.API != APIResponses {
		add(path+".api", "unknown api %q (want chat or responses)", p.API)
	}
	if p.Kind != KindOpenAI && p.API != "" {
		add(path+".api", "api applies to kind openai only")
	}
	if p.Kind == KindMock && p.ListModels {
		add(path+".list_models", "the mock has no upstream to list models from")
	}
	if len(p.Models) == 0 {
		add(path+".models", "no model patterns (use [\"*\"] to serve every model)")
	}
	checkPatterns(path+".models", p.Models, add)
	switch p.CountTokens {
	case "local":
	case "upstream":
		if p.Kind != KindAnthropic && p.Kind != KindGemini {
			add(path+".count_tokens", "upstream counting needs kind anthropic or gemini")
		}
	default:
		add(path+".count_tokens", "want local or upstream, got %q", p.CountTokens)
	}
}

// checkBaseURL wants an http(s) URL with a host and nothing the request
// path would be appended after (a query or fragment) or that would leak
// into logs (a user:password).
func checkBaseURL(path, raw string, add func(string, string, ...any)) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		add(path, "want an http(s) URL, got %q", clip(raw))
	case strings.ContainsAny(raw, "?#"):
		add(path, "must not have a query (?) or fragment (#): request paths are appended to it")
	case u.User != nil:
		add(path, "must not hold credentials (user:password@); put them in keys")
	}
}

func (c *Config) validateAliases(add func(string, string, ...any)) {
	for name, target := range c.Aliases {
		if strings.TrimSpace(name) == "" {
			add("aliases", "empty alias name")
			continue
		}
		prov, model, ok := strings.Cut(target, "/")
		if !ok || prov == "" || model == "" {
			add("aliases."+name, "want provider/model, got %q", target)
			continue
		}
		if c.Provider(prov) == nil {
			add("aliases."+name, "no provider named %q", prov)
		}
		if strings.ContainsAny(model, "*?") {
			add("aliases."+name, "the target model %q is a pattern; name one model", model)
		}
	}
}

// Provider returns the provider with the given name, or nil.
func (c *Config) Provider(name string) *Provider {
	for i := range c.Providers {
		if c.Providers[i].Name == name {
			return &c.Providers[i]
		}
	}
	return nil
}

// IsLoopback reports whether a listen address is on the loopback interface.
func IsLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
