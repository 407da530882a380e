package testkit

// Env returns an environment lookup (the shape config.Parse and
// config.Expand take) that knows only the given pairs: Env("K", "v")
// holds K, Env() holds nothing, so a test never reads the machine's
// environment. An odd last name is ignored.
func Env(kv ...string) func(string) (string, bool) {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}
