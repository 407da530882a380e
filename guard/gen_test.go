package guard

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// gen makes random, structurally valid secrets for tests. None is real: each
// is drawn from a seeded PCG.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

const (
	alUpper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alLower  = "abcdefghijklmnopqrstuvwxyz"
	alDigit  = "0123456789"
	alAlnum  = alUpper + alLower + alDigit
	alB32    = alUpper + "234567"
	alB64    = alAlnum + "+/"
	alURL64  = alAlnum + "_-"
	alHex    = "0123456789abcdef"
	alUpDig  = alUpper + alDigit
	alLocal  = alLower + alDigit + "._"
	alWord   = alAlnum + "_"
	alPasswd = alAlnum + "!$*~-_."
)

func (g *gen) str(alphabet string, n int) string {
	var sb strings.Builder
	for k := 0; k < n; k++ {
		sb.WriteByte(alphabet[g.r.IntN(len(alphabet))])
	}
	return sb.String()
}

func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// mixedB64 is 40 base64 bytes with both cases and a digit.
func (g *gen) mixedB64(n int) string {
	for {
		s := g.str(alB64, n)
		if mixed([]byte(s)) {
			return s
		}
	}
}

// secret is a generated value, the text around it, and the rule.
type secret struct {
	rule    string
	value   string // what the detector must report (raw, escaped as embedded)
	context string // text holding the value at %s
}

// secrets returns one generated secret of every built-in detector (and
// several formats for those that have them).
func (g *gen) secrets() []secret {
	pad := func(rule, v string) secret { return secret{rule, v, "token: %s end"} }
	jwtPart := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	pem := func(kind string) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `-----BEGIN %sPRIVATE KEY-----\n`, kind)
		for k := 0; k < 6; k++ {
			sb.WriteString(g.str(alB64, 64))
			sb.WriteString(`\n`)
		}
		sb.WriteString(g.str(alB64, 20) + "==" + `\n`)
		fmt.Fprintf(&sb, `-----END %sPRIVATE KEY-----`, kind)
		return sb.String()
	}
	out := []secret{
		pad("aws_access_key_id", g.pick("AKIA", "ASIA", "ABIA", "ACCA")+g.str(alB32, 16)),
		{"aws_secret_access_key", g.mixedB64(40), "AWS_SECRET_ACCESS_KEY=%s\\n"},
		{"aws_secret_access_key", g.mixedB64(40), `aws_secret_access_key = %s`},
		{"aws_secret_access_key", g.mixedB64(40), `{\"SecretAccessKey\": \"%s\"}`},
		{"gcp_service_account_key", g.str(alHex, 40), `{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"%s\",`},
		pad("google_api_key", "AIza"+g.str(alURL64, 35)),
		{"azure_storage_key", g.str(alB64, 86) + "==", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=%s;EndpointSuffix=core.windows.net"},
		pad("github_token", g.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_")+g.str(alAlnum, 36)),
		pad("github_token", "github_pat_"+g.str(alWord, 82)),
		pad("gitlab_token", "glpat-"+g.str(alURL64, 20)),
		pad("slack_token", "xoxb-"+g.str(alDigit, 12)+"-"+g.str(alDigit, 13)+"-"+g.str(alAlnum, 24)),
		pad("slack_token", "xoxp-"+g.str(alDigit, 11)+"-"+g.str(alDigit, 11)+"-"+g.str(alDigit, 12)+"-"+g.str(alHex, 32)),
		{"slack_webhook", "hooks.slack.com/services/T" + g.str(alUpDig, 8) + "/B" + g.str(alUpDig, 10) + "/" + g.str(alAlnum, 24), "url=https://%s"},
		pad("stripe_live_key", g.pick("sk_live_", "rk_live_")+g.str(alAlnum, 24+g.r.IntN(76))),
		pad("openai_api_key", g.pick("sk-proj-", "sk-svcacct-", "sk-admin-")+g.str(alURL64, 58)+"T3BlbkFJ"+g.str(alURL64, 58)),
		pad("openai_api_key", "sk-"+g.str(alAlnum, 20)+"T3BlbkFJ"+g.str(alAlnum, 20)),
		pad("anthropic_api_key", g.pick("sk-ant-api03-", "sk-ant-admin01-")+g.str(alURL64, 93)+"AA"),
		pad("npm_token", "npm_"+g.str(alAlnum, 36)),
		pad("pypi_token", "pypi-AgEIcHlwaS5vcmc"+g.str(alURL64, 50+g.r.IntN(150))),
		{"private_key", pem(g.pick("", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ")), `key.pem:\n%s\n`},
		pad("jwt", jwtPart(`{"alg":"HS256","typ":"JWT"}`)+"."+jwtPart(fmt.Sprintf(`{"sub":"%d"}`, g.r.IntN(1e9)))+"."+g.str(alURL64, 43)),
		{"database_url", g.str(alPasswd, 8+g.r.IntN(16)), g.pick("postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqps") + "://app_user:%s@db.internal:5432/app"},
		{"email", g.str(alLower, 1) + g.str(alLocal, 8) + g.str(alLower, 1) + "@" + g.str(alLower, 6) + ".com", "mail %s now"},
		{"phone", "+1 415 555 " + g.str(alDigit, 4), "call %s today"},
		{"phone", "+44 20 7946 " + g.str(alDigit, 4), "call %s today"},
		{"phone", "(415) 555-" + g.str(alDigit, 4), "call %s today"},
		{"payment_card", card(g, "4", 16, " "), "card %s exp"},
		{"payment_card", card(g, "5"+g.pick("1", "2", "3", "4", "5"), 16, "-"), "card %s exp"},
		{"payment_card", card(g, "37", 15, ""), "card %s exp"},
		{"iban", iban(g, "DE", 22, ""), "iban %s ok"},
		{"iban", iban(g, "GB", 22, " "), "iban %s ok"},
		{"us_ssn", fmt.Sprintf("%03d-%02d-%04d", 1+g.r.IntN(665), 1+g.r.IntN(99), 1+g.r.IntN(9999)), "ssn %s ok"},
	}
	return out
}

// card makes a Luhn-valid card number of n digits starting with prefix,
// grouped by 4 with sep (Amex 4-6-5) or ungrouped.
func card(g *gen, prefix string, n int, sep string) string {
	d := []byte(prefix + g.str(alDigit, n-len(prefix)-1))
	for c := byte('0'); c <= '9'; c++ {
		if luhn(append(d[:len(d):len(d)], c)) {
			d = append(d, c)
			break
		}
	}
	if sep == "" {
		return string(d)
	}
	var sb strings.Builder
	for k, c := range d {
		if k > 0 && k%4 == 0 {
			sb.WriteString(sep)
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// iban makes a valid IBAN for country cc of length n, grouped by 4 with sep.
func iban(g *gen, cc string, n int, sep string) string {
	bban := g.str(alDigit, n-4)
	for ck := 2; ck <= 98; ck++ {
		v := fmt.Sprintf("%s%02d%s", cc, ck, bban)
		if mod97([]byte(v)) {
			if sep == "" {
				return v
			}
			var sb strings.Builder
			for k := 0; k < len(v); k++ {
				if k > 0 && k%4 == 0 {
					sb.WriteString(sep)
				}
				sb.WriteByte(v[k])
			}
			return sb.String()
		}
	}
	panic("no check digits")
}

// allRules is a Config with every detector on, Redact.
func allRules() Config {
	var c Config
	for _, n := range Detectors() {
		c.Rules = append(c.Rules, Rule{Name: n})
	}
	return c
}
