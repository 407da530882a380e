package guardtest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Negative returns n bytes of realistic content that holds no secret and
// no personal data: Go, Python and TypeScript source (with the words
// password, token and key, environment lookups and URLs without
// passwords), base64 blobs, UUIDs, git hashes, minified JavaScript,
// lockfiles, logs with timestamps and IP addresses, order ids and
// timestamps that are neither card nor phone numbers, version strings. A
// detector that fires on it is a false positive.
func Negative(seed uint64, n int) []byte {
	r := newRand(seed, 3)
	out := make([]byte, 0, n+4096)
	for len(out) < n {
		out = append(out, pick(r, negativeChunks)(r)...)
		out = append(out, '\n')
	}
	return cutUTF8(out, n)
}

// cutUTF8 cuts b to n bytes without splitting a character: a character cut
// in two is replaced by line breaks.
func cutUTF8(b []byte, n int) []byte {
	b = b[:n]
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(b[i-1]) {
		i--
	}
	if i > 0 && !utf8.FullRune(b[i-1:]) {
		for j := i - 1; j < n; j++ {
			b[j] = '\n'
		}
	}
	return b
}

// negativeChunks each write one realistic piece of secret-free content.
var negativeChunks = []func(r *rand.Rand) string{
	goSource, pythonSource, tsSource, base64Blob, uuidList, gitLog,
	minifiedJS, packageLock, goSum, serviceLog, orderCSV, versionList,
	hashList, configNoSecrets, publicPEM, authorizedKeys, docsMentions,
	k8sManifest, numbersText,
}

func ident(r *rand.Rand) string {
	return pick(r, []string{"user", "order", "cache", "request", "buffer", "token", "session", "config", "item", "result", "handler", "client", "key", "batch", "stream"}) +
		pick(r, []string{"", "ID", "Count", "Map", "List", "Size", "Ref", "Store", "Opts"})
}

func goSource(r *rand.Rand) string {
	name := ident(r)
	return fmt.Sprintf(`// %[1]s returns the %[2]s for a request, or an error when the
// password or token is missing from the environment.
func %[1]s(ctx context.Context, id uint64) (*%[3]s, error) {
	password := os.Getenv("DB_PASSWORD")
	if password == "" {
		return nil, errors.New("DB_PASSWORD is not set")
	}
	key := fmt.Sprintf("%%s:%%d", %[4]q, id)
	v, err := cache.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("cannot load %%s: %%w", key, err)
	}
	const mask = 0x%[5]s
	return &%[3]s{ID: id, Flags: v.Flags & mask, Deadline: time.Unix(%[6]d, 0)}, nil
}
`, "load"+strings.ToUpper(name[:1])+name[1:], name, "Record", name, randString(r, hexChars, 8), 1_700_000_000+r.IntN(100_000_000))
}

func pythonSource(r *rand.Rand) string {
	return fmt.Sprintf(`def fetch_%[1]s(session, %[1]s_id: int, *, retries: int = %[2]d) -> dict:
    """Fetch one %[1]s; the API key comes from the environment."""
    api_key = os.environ["API_KEY"]
    url = f"https://api.internal.example/v2/%[1]s/{%[1]s_id}"
    for attempt in range(retries):
        resp = session.get(url, headers={"Authorization": f"Bearer {api_key}"}, timeout=%[3]d)
        if resp.status_code == 429:
            time.sleep(2 ** attempt)
            continue
        resp.raise_for_status()
        return resp.json()
    raise RuntimeError("gave up after %%d attempts" %% retries)
`, strings.ToLower(ident(r)), 2+r.IntN(4), 5+r.IntN(30))
}

func tsSource(r *rand.Rand) string {
	return fmt.Sprintf(`export async function %[1]s(id: string, opts: { token?: string } = {}): Promise<%[2]s> {
  const token = opts.token ?? process.env.SERVICE_TOKEN;
  if (!token) throw new Error("SERVICE_TOKEN missing");
  const res = await fetch(`+"`${BASE_URL}/v1/%[3]s/${encodeURIComponent(id)}`"+`, {
    headers: { authorization: `+"`Bearer ${token}`"+`, "x-request-id": crypto.randomUUID() },
  });
  if (res.status === %[4]d) return { id, items: [], total: 0 } as %[2]s;
  return (await res.json()) as %[2]s;
}
`, "get"+ident(r), "Page<Item>", strings.ToLower(ident(r)), 404+r.IntN(2))
}

func base64Blob(r *rand.Rand) string {
	b := base64.StdEncoding.EncodeToString(randBytes(r, 300+r.IntN(3000)))
	if r.IntN(2) == 0 {
		return "data:image/png;base64," + b
	}
	var s strings.Builder
	for len(b) > 76 {
		s.WriteString(b[:76] + "\n")
		b = b[76:]
	}
	return s.String() + b
}

func uuid(r *rand.Rand) string {
	h := randString(r, hexChars, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

func uuidList(r *rand.Rand) string {
	var s strings.Builder
	for range 5 + r.IntN(20) {
		s.WriteString(uuid(r) + "\t" + pick(r, []string{"pending", "done", "failed"}) + "\n")
	}
	return s.String()
}

func gitLog(r *rand.Rand) string {
	var s strings.Builder
	s.WriteString("$ git log --format='%H %ad %s' --date=iso -n 8\n")
	for range 8 {
		fmt.Fprintf(&s, "%s 2026-%02d-%02d %02d:%02d:%02d +0100 %s: %s\n", randString(r, hexChars, 40), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60),
			pick(r, []string{"server", "codec", "docs", "ci"}), pick(r, []string{"fix the retry loop", "rotate the token cache key", "count tokens once", "bump deps to v1.24.3"}))
	}
	return s.String()
}

func minifiedJS(r *rand.Rand) string {
	var s strings.Builder
	s.WriteString("!function(e,t){\"object\"==typeof exports?module.exports=t():e.lib=t()}(this,function(){")
	for range 20 + r.IntN(40) {
		a, b := randString(r, lowerChars, 1), randString(r, lowerChars, 1)
		fmt.Fprintf(&s, "var %s%d=function(%s,%s){return %s.%s(%s,%d)&&%s[%q]||0x%s},", a, r.IntN(99), a, b, a, ident(r), b, r.IntN(1<<20), b, ident(r), randString(r, hexChars, 6))
	}
	s.WriteString("n=Date.now();return{v:\"4.17.21\"}});\n//# sourceMappingURL=lib.min.js.map")
	return s.String()
}

func packageLock(r *rand.Rand) string {
	name := pick(r, []string{"lodash", "react-dom", "@babel/core", "esbuild", "zod", "undici"})
	ver := fmt.Sprintf("%d.%d.%d", r.IntN(20), r.IntN(30), r.IntN(40))
	base := name[strings.LastIndex(name, "/")+1:]
	return fmt.Sprintf(`    "node_modules/%s": {
      "version": "%s",
      "resolved": "https://registry.npmjs.org/%s/-/%s-%s.tgz",
      "integrity": "sha512-%s",
      "license": "MIT",
      "engines": { "node": ">=18" }
    },`, name, ver, name, base, ver, base64.StdEncoding.EncodeToString(randBytes(r, 64)))
}

func goSum(r *rand.Rand) string {
	mod := pick(r, []string{"github.com/valyala/fasthttp", "golang.org/x/net", "github.com/tidwall/gjson", "go.yaml.in/yaml/v3"})
	ver := fmt.Sprintf("v%d.%d.%d", r.IntN(2), r.IntN(80), r.IntN(20))
	return fmt.Sprintf("%s %s h1:%s\n%s %s/go.mod h1:%s", mod, ver, base64.StdEncoding.EncodeToString(randBytes(r, 32)), mod, ver, base64.StdEncoding.EncodeToString(randBytes(r, 32)))
}

func ipv4(r *rand.Rand) string {
	return fmt.Sprintf("%d.%d.%d.%d", pick(r, []int{10, 172, 192, 34, 52}), r.IntN(256), r.IntN(256), 1+r.IntN(254))
}

func serviceLog(r *rand.Rand) string {
	var s strings.Builder
	for range 5 + r.IntN(15) {
		fmt.Fprintf(&s, "2026-11-%02dT%02d:%02d:%02d.%03dZ %s request_id=%s remote=%s:%d method=%s path=/api/v1/orders/%d status=%d latency=%dms bytes=%d\n",
			1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000), pick(r, []string{"INFO", "WARN", "DEBUG"}), uuid(r), ipv4(r), 1024+r.IntN(60000),
			pick(r, []string{"GET", "POST"}), r.IntN(10_000_000), pick(r, []int{200, 201, 304, 404, 429, 500}), r.IntN(900), r.IntN(100_000))
	}
	fmt.Fprintf(&s, "fe80::%s:%s:%s:%s dropped after %d retries\n", randString(r, hexChars, 4), randString(r, hexChars, 4), randString(r, hexChars, 4), randString(r, hexChars, 4), r.IntN(5))
	return s.String()
}

// notCard returns a digit string of length n that no card detector may
// take: if it passes Luhn, its last digit is changed.
func notCard(r *rand.Rand, n int) string {
	s := randDigits(r, n, true)
	if Luhn(s) {
		last := byte('0' + (s[n-1]-'0'+1)%10)
		s = s[:n-1] + string(last)
	}
	return s
}

func orderCSV(r *rand.Rand) string {
	var s strings.Builder
	s.WriteString("order_id,created_ms,sku,qty,amount_cents,shipment\n")
	for range 10 + r.IntN(30) {
		fmt.Fprintf(&s, "%s,%d,SKU-%s,%d,%d,%s\n", notCard(r, 16), 1_764_000_000_000+r.Int64N(10_000_000_000), randString(r, upperChars+digitChars, 6),
			1+r.IntN(9), r.IntN(1_000_000), notCard(r, 12+r.IntN(8)))
	}
	return s.String()
}

func versionList(r *rand.Rand) string {
	var s strings.Builder
	for range 5 + r.IntN(10) {
		fmt.Fprintf(&s, "%s v%d.%d.%d-%s.%d (go1.%d.%d, build %s)\n", pick(r, []string{"slipstream", "node", "python", "kubectl"}), r.IntN(3), r.IntN(40), r.IntN(20),
			pick(r, []string{"rc", "beta", "alpha"}), r.IntN(9), 20+r.IntN(7), r.IntN(10), randString(r, hexChars, 12))
	}
	return s.String()
}

func hashList(r *rand.Rand) string {
	var s strings.Builder
	for range 5 + r.IntN(10) {
		fmt.Fprintf(&s, "%s  dist/%s-%s.tar.gz\nsha1:%s md5:%s\n", randString(r, hexChars, 64), ident(r), strconv.Itoa(r.IntN(100)), randString(r, hexChars, 40), randString(r, hexChars, 32))
	}
	return s.String()
}

func configNoSecrets(r *rand.Rand) string {
	return fmt.Sprintf(`# config.yaml (secrets come from the environment)
server:
  listen: 0.0.0.0:%d
  read_timeout: 30s
database:
  url: postgres://db.internal:5432/app?sslmode=disable
  password: ${DB_PASSWORD}
  max_conns: %d
redis:
  url: redis://cache.internal:6379/0
auth:
  jwt_issuer: https://auth.example.internal
  token_ttl: 1h
  api_key_header: X-Api-Key
features: [search, export, "beta-ui"]
build: {commit: %s, version: 1.%d.%d}
`, 8000+r.IntN(1000), 5+r.IntN(50), randString(r, hexChars, 40), r.IntN(40), r.IntN(20))
}

// NegativeBody returns a valid request body in dialect whose tool results
// hold Negative(seed, n) in pieces of 2 to 16 KB (cut at line breaks),
// around a system prompt, a task and assistant turns that hold no secret
// either, encoded as Traffic encodes.
func NegativeBody(dialect string, seed uint64, n int) []byte {
	content := string(Negative(seed, n))
	c := buildConvo(seed, nil)
	c.steps = c.steps[:0]
	r := c.r
	for content != "" {
		k := min(len(content), 2048+r.IntN(14*1024))
		if i := strings.LastIndexByte(content[:k], '\n'); i > 0 && k < len(content) {
			k = i + 1
		}
		c.steps = append(c.steps, step{say: "Reading the next file.", tool: "read",
			args: obj{{"file_path", pick(r, []string{"vendor/lib.min.js", "package-lock.json", "logs/app.log", "internal/store/store.go", "go.sum"})}}, result: content[:k]})
		content = content[k:]
	}
	return encodeJSON(nil, c.body(dialect, false), escapeMode(seed%uint64(numEscapeModes)))
}

// publicPEM is a certificate or public key: PEM armour that is no secret.
func publicPEM(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return pemBlock("CERTIFICATE", append([]byte{0x30, 0x82, 0x03, 0x0d, 0x30, 0x82, 0x01, 0xf5, 0xa0, 0x03, 0x02, 0x01, 0x02}, randBytes(r, 760)...), 64)
	}
	return pemBlock("PUBLIC KEY", append([]byte{0x30, 0x82, 0x01, 0x22, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00}, randBytes(r, 271)...), 64)
}

// authorizedKeys are SSH public keys; their comments are user@host
// without a domain, which is no e-mail address.
func authorizedKeys(r *rand.Rand) string {
	var s strings.Builder
	for range 2 + r.IntN(4) {
		blob := append([]byte("\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"), randBytes(r, 32)...)
		fmt.Fprintf(&s, "ssh-ed25519 %s %s@%s\n", base64.StdEncoding.EncodeToString(blob), pick(r, []string{"dev", "ci", "deploy"}), pick(r, []string{"laptop", "build-01", "bastion"}))
	}
	return s.String()
}

// docsMentions talk about credential formats without holding one, as
// READMEs and runbooks do: a paragraph of such sentences, now and then with
// a connection string whose password is a placeholder.
func docsMentions(r *rand.Rand) string {
	sentences := []string{
		"Access key ids start with AKIA (long-term) or ASIA (temporary) and are 20 characters long; never commit them.",
		"GitHub classic tokens start with ghp_, fine-grained ones with github_pat_; rotate them every 90 days.",
		"Set OPENAI_API_KEY=sk-... (a project key, sk-proj-...) and ANTHROPIC_API_KEY=sk-ant-... in your shell, not in the repo.",
		"Stripe keys: sk_test_ for tests; a key starting with sk_live_ must never leave the vault.",
		"JWTs have three base64url parts separated by dots; the header usually starts with eyJ.",
		"Secrets are injected at runtime from the vault; the app reads them with os.Getenv and never logs them.",
	}
	r.Shuffle(len(sentences), func(i, j int) { sentences[i], sentences[j] = sentences[j], sentences[i] })
	out := "## Credentials\n\n" + strings.Join(sentences[:3+r.IntN(4)], " ") + "\n"
	if r.IntN(8) == 0 {
		out += pick(r, []string{"The connection string looks like postgres://USER:PASSWORD@HOST:5432/DB; take it from the secret store.\n",
			"Example: redis://:${REDIS_PASSWORD}@cache:6379/0\n", "mysql://app:<password>@db:3306/shop\n"})
	}
	return out
}

// k8sManifest is a deployment with image digests and a non-secret
// ConfigMap.
func k8sManifest(r *rand.Rand) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: billing, labels: {app: billing, version: v1.%d.%d}}
spec:
  replicas: %d
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/billing@sha256:%s
          env:
            - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: billing-db, key: password}}}
          resources: {limits: {cpu: 500m, memory: 256Mi}}
---
apiVersion: v1
kind: ConfigMap
data:
  settings.json: %s
`, r.IntN(40), r.IntN(20), 1+r.IntN(5), randString(r, hexChars, 64), base64.StdEncoding.EncodeToString([]byte(`{"region":"eu-central-1","workers":4}`)))
}

// numbersText holds numbers of every shape that is not personal data:
// prices, percentages, coordinates, ISBNs, durations, dates, counts.
func numbersText(r *rand.Rand) string {
	return fmt.Sprintf("Revenue $%d,%03d.%02d (+%d.%d%%), p99 %d.%dms over %d requests; HQ at %d.%04d, %d.%04d; ISBN 978-%d-%02d-%06d-%d; build 2026.%02d.%02d.%d; timeout %ds; chunk %d/%d; offset 0x%08x; %d.%d.%d.%d/%d\n",
		1+r.IntN(900), r.IntN(1000), r.IntN(100), r.IntN(40), r.IntN(10), r.IntN(900), r.IntN(10), r.IntN(10_000_000),
		r.IntN(90), r.IntN(10000), r.IntN(180), r.IntN(10000), r.IntN(10), r.IntN(100), r.IntN(1_000_000), r.IntN(10),
		1+r.IntN(12), 1+r.IntN(28), r.IntN(1000), r.IntN(600), r.IntN(64), 64, r.Uint32(), 10, r.IntN(256), r.IntN(256), 0, 16+r.IntN(9))
}
