package guardtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxVariants is the largest variant count of any rule.
func maxVariants() int {
	n := 0
	for _, r := range Rules {
		n = max(n, Variants(r))
	}
	return n
}

func TestSecretsCoverEveryRuleAndVariant(t *testing.T) {
	per := maxVariants()
	secrets := Secrets(1, per)
	if len(secrets) != per*len(Rules) {
		t.Fatalf("%d secrets, want %d", len(secrets), per*len(Rules))
	}
	variants := map[string]map[string]bool{}
	for _, s := range secrets {
		if variants[s.Rule] == nil {
			variants[s.Rule] = map[string]bool{}
		}
		variants[s.Rule][s.Variant] = true
		if s.Value == "" || (s.Context != "" && strings.Count(s.Context, "%s") != 1) {
			t.Fatalf("%s/%s: bad value or context %q", s.Rule, s.Variant, s.Context)
		}
		if !strings.Contains(s.Text(), s.Value) {
			t.Fatalf("%s: Text does not hold the value", s.Rule)
		}
	}
	for _, r := range Rules {
		if Variants(r) == 0 {
			t.Fatalf("rule %s has no generator", r)
		}
		// Random grouping can merge variants (iban, cards); the format
		// variants themselves must all appear.
		if len(variants[r]) < Variants(r) && r != "iban" && r != "payment_card" {
			t.Fatalf("rule %s: variants %v, want %d", r, variants[r], Variants(r))
		}
	}
	for _, want := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"} {
		if !variants["github_token"][want] {
			t.Fatalf("github variant %s missing", want)
		}
	}
	for _, want := range []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "legacy"} {
		if !variants["openai_api_key"][want] {
			t.Fatalf("openai variant %s missing", want)
		}
	}
	for _, want := range []string{"rsa", "ec", "pkcs8_rsa", "pkcs8_ed25519", "openssh"} {
		if !variants["private_key"][want] {
			t.Fatalf("private key variant %s missing", want)
		}
	}
	for _, want := range []string{"postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqp", "amqps"} {
		if !variants["database_url"][want] {
			t.Fatalf("database_url variant %s missing", want)
		}
	}
}

func TestSecretsDeterministic(t *testing.T) {
	a, b, c := Secrets(7, 3), Secrets(7, 3), Secrets(8, 3)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different secrets")
	}
	same := 0
	for i := range a {
		if a[i].Value == c[i].Value {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("seeds 7 and 8 share %d values", same)
	}
	if !bytes.Equal(Traffic(DialectAnthropic, 3, a), Traffic(DialectAnthropic, 3, b)) || !bytes.Equal(Negative(5, 1000), Negative(5, 1000)) {
		t.Fatal("traffic or negative content is not deterministic")
	}
}

// TestSecretShapes checks each rule's structure the way its detector will.
func TestSecretShapes(t *testing.T) {
	shapes := map[string]*regexp.Regexp{
		"aws_access_key_id":     regexp.MustCompile(`^(AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}$`),
		"aws_secret_access_key": regexp.MustCompile(`^[A-Za-z0-9/+]{40}$`),
		"google_api_key":        regexp.MustCompile(`^AIza[0-9A-Za-z_-]{35}$`),
		"azure_storage_key":     regexp.MustCompile(`^[A-Za-z0-9/+]{86}==$`),
		"github_token":          regexp.MustCompile(`^(gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})$`),
		"gitlab_token":          regexp.MustCompile(`^glpat-[0-9A-Za-z_-]{20}$`),
		"slack_token":           regexp.MustCompile(`^xox[bpars]-[0-9]+(-[0-9]+)+-[0-9A-Za-z]+$|^xoxa-2-[0-9]+-[0-9]+-[0-9a-f]+$`),
		"slack_webhook":         regexp.MustCompile(`^https://hooks\.slack\.com/services/T[A-Z0-9]{8,10}/B[A-Z0-9]{8,10}/[A-Za-z0-9]{24}$`),
		"stripe_live_key":       regexp.MustCompile(`^[sr]k_live_[0-9A-Za-z]{24,99}$`),
		"openai_api_key":        regexp.MustCompile(`^sk-(proj-|svcacct-|admin-)[A-Za-z0-9_-]{74}T3BlbkFJ[A-Za-z0-9_-]{74}$|^sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}$`),
		"anthropic_api_key":     regexp.MustCompile(`^sk-ant-(api03|admin01)-[A-Za-z0-9_-]{93}AA$`),
		"npm_token":             regexp.MustCompile(`^npm_[A-Za-z0-9]{36}$`),
		"pypi_token":            regexp.MustCompile(`^pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}$`),
		"database_url":          regexp.MustCompile(`^[A-Za-z0-9._~!*-]{12,24}$`),
		"email":                 regexp.MustCompile(`^[A-Za-z0-9.+]+@[a-z0-9.-]+\.[a-z]{2,}$`),
		"phone":                 regexp.MustCompile(`^(\+1[2-9]\d\d[2-9]\d{6}|\([2-9]\d\d\) [2-9]\d\d-\d{4}|[2-9]\d\d-[2-9]\d\d-\d{4}|\+1 [2-9]\d\d-[2-9]\d\d-\d{4}|\+44 20 \d{4} \d{4}|\+447\d{9}|07\d{3} \d{6}|\+49 30 \d{8}|\+49 1[567]\d \d{8})$`),
		"us_ssn":                regexp.MustCompile(`^\d{3}-\d{2}-\d{4}$`),
	}
	for _, s := range Secrets(3, 4*maxVariants()) {
		if re := shapes[s.Rule]; re != nil && !re.MatchString(s.Value) {
			t.Fatalf("%s/%s: %q does not have the shape %s", s.Rule, s.Variant, s.Value, re)
		}
		switch s.Rule {
		case "github_token", "npm_token":
			if !strings.HasPrefix(s.Value, "github_pat_") && !TokenChecksumValid(s.Value) {
				t.Fatalf("%s: %q has a bad checksum", s.Rule, s.Value)
			}
		case "payment_card":
			checkCard(t, s)
		case "iban":
			if !IBANValid(s.Value) {
				t.Fatalf("iban %q fails mod-97", s.Value)
			}
		case "jwt":
			checkJWT(t, s.Value)
		case "us_ssn":
			area, _ := strconv.Atoi(s.Value[:3])
			if area == 0 || area == 666 || area >= 900 || s.Value[4:6] == "00" || s.Value[7:] == "0000" {
				t.Fatalf("ssn %q is in an invalid range", s.Value)
			}
		case "private_key":
			checkPEM(t, s.Value)
		case "gcp_service_account_key":
			checkPEM(t, strings.ReplaceAll(s.Value, `\n`, "\n"))
			var f map[string]string
			if err := json.Unmarshal([]byte(s.Text()), &f); err != nil || f["type"] != "service_account" || !strings.HasPrefix(f["private_key"], "-----BEGIN PRIVATE KEY-----\n") {
				t.Fatalf("the key file does not decode: %v", err)
			}
		case "azure_storage_key":
			if b, err := base64.StdEncoding.DecodeString(s.Value); err != nil || len(b) != 64 {
				t.Fatalf("azure key %q: %v", s.Value, err)
			}
		}
	}
}

func checkCard(t *testing.T, s Secret) {
	t.Helper()
	digits := strings.NewReplacer(" ", "", "-", "").Replace(s.Value)
	if !Luhn(digits) {
		t.Fatalf("card %q fails Luhn", s.Value)
	}
	ok := false
	switch {
	case strings.HasPrefix(s.Variant, "visa"):
		ok = digits[0] == '4' && len(digits) == 16
	case strings.HasPrefix(s.Variant, "mastercard"):
		p2, _ := strconv.Atoi(digits[:2])
		p4, _ := strconv.Atoi(digits[:4])
		ok = len(digits) == 16 && ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720))
	case strings.HasPrefix(s.Variant, "amex"):
		ok = len(digits) == 15 && (digits[:2] == "34" || digits[:2] == "37")
	case strings.HasPrefix(s.Variant, "discover"):
		p3, _ := strconv.Atoi(digits[:3])
		ok = len(digits) == 16 && (digits[:4] == "6011" || digits[:2] == "65" || (p3 >= 644 && p3 <= 649))
	}
	if !ok {
		t.Fatalf("card %q is not a %s number", s.Value, s.Variant)
	}
}

func checkJWT(t *testing.T, tok string) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("jwt %q has %d parts", tok, len(parts))
	}
	for i, p := range parts[:2] {
		b, err := base64.RawURLEncoding.DecodeString(p)
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil || (i == 0 && m["alg"] == nil) {
			t.Fatalf("jwt part %d of %q does not decode to JSON (with alg): %v", i, tok, err)
		}
	}
}

func checkPEM(t *testing.T, pem string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(pem, "\n"), "\n")
	begin, end := lines[0], lines[len(lines)-1]
	typ, ok := strings.CutPrefix(begin, "-----BEGIN ")
	if !ok || end != "-----END "+typ {
		t.Fatalf("bad PEM armour %q / %q", begin, end)
	}
	body := lines[1 : len(lines)-1]
	width := 64
	if strings.Contains(typ, "OPENSSH") {
		width = 70
	}
	for i, l := range body {
		if len(l) > width || (i < len(body)-1 && len(l) != width) {
			t.Fatalf("PEM line %d is %d long", i, len(l))
		}
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(body, ""))
	if err != nil {
		t.Fatalf("PEM body: %v", err)
	}
	if strings.Contains(typ, "OPENSSH") {
		if !bytes.HasPrefix(der, []byte("openssh-key-v1\x00")) {
			t.Fatal("OpenSSH key without its magic")
		}
		return
	}
	if der[0] != 0x30 {
		t.Fatalf("DER does not start with a SEQUENCE: %x", der[:4])
	}
}

// TestTrafficEmbedsEverySecret: every body is valid JSON, the secrets are
// readable in it, and the escaping variants occur.
func TestTrafficEmbedsEverySecret(t *testing.T) {
	secrets := Secrets(11, maxVariants())
	seen := map[string]bool{}
	for seed := uint64(0); seed < 8; seed++ {
		bodies := map[string][]byte{"ws": TrafficWS(seed, secrets)}
		for _, d := range Dialects {
			bodies[d] = Traffic(d, seed, secrets)
		}
		for name, body := range bodies {
			if !json.Valid(body) {
				t.Fatalf("%s seed %d: invalid JSON", name, seed)
			}
			leaked, err := Leaks(body, secrets)
			if err != nil || len(leaked) != len(secrets) {
				t.Fatalf("%s seed %d: %d of %d secrets readable (%v)", name, seed, len(leaked), len(secrets), err)
			}
			for _, esc := range []string{`\/`, `\u003c`, `\u2019`, `\ud83d\ude80`, `\\n`, `\"`} {
				if bytes.Contains(body, []byte(esc)) {
					seen[esc] = true
				}
			}
		}
	}
	if len(seen) != 6 {
		t.Fatalf("escapes seen: %v, want all six", seen)
	}
	var ws map[string]any
	if err := json.Unmarshal(TrafficWS(1, secrets[:3]), &ws); err != nil || ws["type"] != "response.create" || ws["input"] == nil || ws["client_metadata"] == nil {
		t.Fatalf("ws frame: %v %v", err, ws["type"])
	}
}

// TestTrafficShapes checks the members each dialect's reader looks for.
func TestTrafficShapes(t *testing.T) {
	secrets := Secrets(2, 2)
	f := func(dialect string, want ...string) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(Traffic(dialect, 5, secrets), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range want {
			if m[k] == nil {
				t.Fatalf("%s: no %s", dialect, k)
			}
		}
	}
	f(DialectAnthropic, "model", "max_tokens", "system", "messages", "tools")
	f(DialectChat, "model", "messages", "tools")
	f(DialectResponses, "model", "input", "tools")
	f(DialectGemini, "contents", "systemInstruction", "tools")
}

func TestNegative(t *testing.T) {
	for _, n := range []int{0, 1, 100, 4097, 1 << 20} {
		b := Negative(uint64(n), n)
		if len(b) != n {
			t.Fatalf("Negative(%d) is %d bytes", n, len(b))
		}
	}
	neg := Negative(9, 2<<20)
	// Nothing a detector should take: no credential shape, no private key
	// armour, no address, no URL with a password, no Luhn-valid card.
	for _, p := range []string{`(AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`, `AIza[0-9A-Za-z_-]{35}`, `gh[pousr]_[A-Za-z0-9]{36}`, `github_pat_[A-Za-z0-9]`,
		`glpat-[0-9A-Za-z_-]{20}`, `xox[bpars]-[0-9]`, `hooks\.slack\.com/services/T`, `[sr]k_live_[0-9A-Za-z]`, `sk-(proj|svcacct|admin)-[A-Za-z0-9]`,
		`T3BlbkFJ`, `sk-ant-[a-z]`, `npm_[A-Za-z0-9]{36}`, `pypi-AgEIcHlwaS5vcmc`, `BEGIN [A-Z ]*PRIVATE KEY`, `AccountKey=`} {
		if m := regexp.MustCompile(p).FindIndex(neg); m != nil {
			t.Fatalf("negative content matches %s: %q", p, neg[max(0, m[0]-40):min(len(neg), m[1]+40)])
		}
	}
	if m := regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.eyJ`).Find(neg); m != nil {
		t.Fatalf("negative content holds a JWT %q", m)
	}
	if m := regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}`).Find(neg); m != nil {
		t.Fatalf("negative content holds an address %q", m)
	}
	// Passwords in negative content are placeholders only.
	for _, m := range regexp.MustCompile(`[a-z]+://[^/\s:@]*:([^/\s@]+)@`).FindAllSubmatch(neg, -1) {
		if p := string(m[1]); p != "PASSWORD" && p != "<password>" && p != "${REDIS_PASSWORD}" {
			t.Fatalf("negative content holds a URL with a password %q", m[0])
		}
	}
	for _, m := range regexp.MustCompile(`\b[2-6]\d{15}\b`).FindAll(neg, -1) {
		if Luhn(string(m)) {
			t.Fatalf("negative content holds a Luhn-valid number %s", m)
		}
	}
	for _, d := range Dialects {
		body := NegativeBody(d, 4, 64<<10)
		if !json.Valid(body) || len(body) < 64<<10 {
			t.Fatalf("%s: negative body of %d bytes, valid %v", d, len(body), json.Valid(body))
		}
	}
}

func TestChecksums(t *testing.T) {
	f := func(fn func(string) bool, in string, want bool) {
		t.Helper()
		if got := fn(in); got != want {
			t.Fatalf("%q: %v, want %v", in, got, want)
		}
	}
	// Published test numbers.
	f(Luhn, "4111 1111 1111 1111", true)
	f(Luhn, "4111 1111 1111 1112", false)
	f(Luhn, "378282246310005", true)
	f(IBANValid, "GB82 WEST 1234 5698 7654 32", true)
	f(IBANValid, "DE89370400440532013000", true)
	f(IBANValid, "DE89370400440532013001", false)
	f(TokenChecksumValid, "ghp_"+strings.Repeat("a", 30)+base62CRC(strings.Repeat("a", 30)), true)
	f(TokenChecksumValid, "ghp_"+strings.Repeat("a", 36), false)
}
