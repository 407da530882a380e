package config

import (
	"fmt"
	"strings"
)

// ProviderKey is one credential of a provider. In YAML it is either the
// secret alone ("sk-...") or a mapping {key, name, weight}.
type ProviderKey struct {
	// Key is the secret sent upstream. Never printed.
	Key string `yaml:"key" secret:"true"`
	// Name identifies the credential in logs and metrics. Default
	// "key#N" (N its index in keys).
	Name string `yaml:"name"`
	// Weight is the credential's share under strategy weighted. Default 1.
	Weight int `yaml:"weight"`
}

// setScalar lets the decoder accept the plain-string form.
func (k *ProviderKey) setScalar(v string) { k.Key = v }

func (k *ProviderKey) fields() string { return "key, name, weight" }

// scalarForm is a struct type that may also be written as one scalar.
type scalarForm interface {
	setScalar(string)
	fields() string // the mapping form's fields, for a problem
}

// Credential strategies.
const (
	StrategyRoundRobin = "round-robin"
	StrategyFillFirst  = "fill-first"
	StrategyWeighted   = "weighted"
)

// Budget periods.
const (
	PeriodDaily   = "daily"
	PeriodMonthly = "monthly"
)

// Failover bounds the attempts one request makes before its first byte
// reaches the client, and how long a failing credential rests.
type Failover struct {
	// MaxAttempts is the most upstream calls one request makes across
	// credentials, providers and fallbacks. Default 4.
	MaxAttempts int `yaml:"max_attempts"`
	// Deadline is the total time a request may spend failing over: no new
	// attempt starts after it (each attempt is bounded by
	// timeouts.first_byte). Default 2m.
	Deadline Duration `yaml:"deadline"`
	// RateLimited is the cooldown of a credential answering 429 without
	// Retry-After: it doubles from this value with each consecutive 429, up
	// to RateLimitedMax. Default 1s.
	RateLimited Duration `yaml:"rate_limited"`
	// RateLimitedMax caps the 429 cooldown, Retry-After included. Default
	// 30m.
	RateLimitedMax Duration `yaml:"rate_limited_max"`
	// Unauthorized is the cooldown after 401 or 403. Default 30m.
	Unauthorized Duration `yaml:"unauthorized"`
	// ServerError is the cooldown after a 5xx, a reset connection or a
	// timeout, and caps ConnectError's doubling. Default 60s.
	ServerError Duration `yaml:"server_error"`
	// ConnectError is the first cooldown after a connection that could not
	// be made (refused, DNS, TLS, proxy, connect timeout): it doubles with
	// each consecutive such failure, up to ServerError. Default 1s.
	ConnectError Duration `yaml:"connect_error"`
}

func (f *Failover) applyDefaults() {
	def := func(d *Duration, v Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if f.MaxAttempts == 0 {
		f.MaxAttempts = 4
	}
	def(&f.Deadline, Duration(120e9))
	def(&f.RateLimited, Duration(1e9))
	def(&f.RateLimitedMax, Duration(1800e9))
	def(&f.Unauthorized, Duration(1800e9))
	def(&f.ServerError, Duration(60e9))
	def(&f.ConnectError, Duration(1e9))
}

func (f *Failover) validate(add func(string, string, ...any)) {
	if f.MaxAttempts < 0 {
		add("failover.max_attempts", "must not be negative, got %d", f.MaxAttempts)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"deadline", f.Deadline}, {"rate_limited", f.RateLimited}, {"rate_limited_max", f.RateLimitedMax}, {"unauthorized", f.Unauthorized}, {"server_error", f.ServerError}, {"connect_error", f.ConnectError}} {
		if d.v < 0 {
			add("failover."+d.name, "must not be negative, got %s", d.v.D())
		}
	}
}

func (p *Provider) applyKeyDefaults() {
	if p.Strategy == "" {
		p.Strategy = StrategyRoundRobin
	}
	for i := range p.Keys {
		if p.Keys[i].Name == "" {
			p.Keys[i].Name = fmt.Sprintf("key#%d", i)
		}
		if p.Keys[i].Weight == 0 {
			p.Keys[i].Weight = 1
		}
	}
}

func (p *Provider) validateKeys(path string, add func(string, string, ...any)) {
	names := map[string]bool{}
	for j, k := range p.Keys {
		kp := fmt.Sprintf("%s.keys[%d]", path, j)
		checkSecret(kp, k.Key, add)
		if k.Weight < 0 || k.Weight > 1000 {
			add(kp+".weight", "want a weight from 1 to 1000, got %d", k.Weight)
		}
		if names[k.Name] {
			add(kp+".name", "duplicate credential name %q", k.Name)
		}
		names[k.Name] = true
	}
	switch p.Strategy {
	case StrategyRoundRobin, StrategyFillFirst, StrategyWeighted:
	case StrategySoonestReset:
		if !IsAccountKind(p.Kind) {
			add(path+".strategy", "soonest-reset applies to account kinds only")
		}
	default:
		add(path+".strategy", "want round-robin, fill-first or weighted, got %q", p.Strategy)
	}
	if p.AffinityHeader != "" && !p.Affinity {
		add(path+".affinity_header", "set affinity: true as well")
	}
}

func (c *Config) validateFallbacks(add func(string, string, ...any)) {
	for model, targets := range c.Fallbacks {
		for i, t := range targets {
			prov, m, ok := strings.Cut(t, "/")
			path := fmt.Sprintf("fallbacks.%s[%d]", model, i)
			switch {
			case !ok || m == "":
				add(path, "want provider/model, got %q", clip(t))
			case c.Provider(prov) == nil:
				add(path, "unknown provider %q", clip(prov))
			case c.Provider(prov).Kind == KindMock:
				add(path, "the mock cannot be a fallback")
			}
		}
	}
}

// keyDigestLen is the length of a hex SHA-256 digest.
const keyDigestLen = 64

func (k *Key) validatePolicy(path string, add func(string, string, ...any)) {
	if k.KeySHA256 != "" {
		if k.Key != "" {
			add(path+".key_sha256", "set key or key_sha256, not both")
		}
		if len(k.KeySHA256) != keyDigestLen || strings.Trim(strings.ToLower(k.KeySHA256), "0123456789abcdef") != "" {
			add(path+".key_sha256", "want 64 hex digits (sha256sum of the key)")
		}
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"rpm", k.RPM}, {"tpm", k.TPM}, {"budget", k.Budget}} {
		if v.n < 0 {
			add(path+"."+v.name, "must not be negative, got %d", v.n)
		}
	}
	switch k.Period {
	case "", PeriodDaily, PeriodMonthly:
	default:
		add(path+".period", "want daily or monthly, got %q", k.Period)
	}
}
