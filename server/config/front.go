package config

import (
	"fmt"
	"net/url"
	"strings"
)

// CORS configures the answers to browsers. slipstream serves no page of
// its own, so every request that carries an Origin header comes from a
// page on another origin; it is refused unless its origin is listed here.
type CORS struct {
	// AllowedOrigins are the origins (scheme://host[:port], as browsers
	// send them in Origin, e.g. "http://localhost:3000") whose pages may
	// call slipstream; "*" allows every origin. Their requests get CORS
	// headers and their preflights (OPTIONS) a 204. Default: none, every
	// request with an Origin header is refused with 403.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// MaxAge is how long, in seconds, a browser may cache a preflight's
	// answer (Access-Control-Max-Age). Default 600.
	MaxAge int `yaml:"max_age"`
}

// DefaultCORSMaxAge is cors.max_age's default, in seconds.
const DefaultCORSMaxAge = 600

func (c *CORS) applyDefaults() {
	if c.MaxAge == 0 {
		c.MaxAge = DefaultCORSMaxAge
	}
}

// validateFront checks allowed_hosts, cors and forward_headers.
func (c *Config) validateFront(add func(string, string, ...any)) {
	for i, h := range c.AllowedHosts {
		path := fmt.Sprintf("allowed_hosts[%d]", i)
		rest := strings.TrimPrefix(h, "*.")
		switch {
		case h == "*":
		case rest == "" || strings.ContainsAny(rest, "*/:[] \t"):
			add(path, "want a host name without port, \"*.domain\" or \"*\" (got %q)", h)
		}
	}
	for i, o := range c.CORS.AllowedOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			add(fmt.Sprintf("cors.allowed_origins[%d]", i), "want an origin, scheme://host[:port], or \"*\" (got %q)", o)
		}
	}
	if c.CORS.MaxAge < 0 {
		add("cors.max_age", "must not be negative")
	}
	for i, h := range c.ForwardHeaders {
		name := strings.TrimSuffix(h, "*")
		if !isToken(name) {
			add(fmt.Sprintf("forward_headers[%d]", i), "want a header name, or a prefix ending in \"*\" (got %q)", h)
		}
	}
}
