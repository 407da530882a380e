package guardtest

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
)

// githubToken: ghp_/gho_/ghu_/ghs_/ghr_ with 30 random characters and their
// base62 CRC32 (36 in all), or a fine-grained github_pat_ (22 + _ + 59).
func githubToken(r *rand.Rand, v int) Secret {
	ctx := pick(r, []string{"GITHUB_TOKEN=%s", "git clone https://x-access-token:%s@github.com/acme/api.git", "Authorization: token %s", `"token": "%s"`})
	if v == 5 {
		val := "github_pat_" + randString(r, alnumChars, 22) + "_" + randString(r, alnumChars, 59)
		return Secret{Rule: "github_token", Value: val, Context: ctx, Variant: "github_pat_"}
	}
	prefix := []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}[v]
	body := randString(r, alnumChars, 30)
	return Secret{Rule: "github_token", Value: prefix + body + base62CRC(body), Context: ctx, Variant: prefix}
}

// gitlabToken: glpat- and 20 characters of [0-9A-Za-z_-].
func gitlabToken(r *rand.Rand, v int) Secret {
	ctx := []string{"GITLAB_TOKEN=%s", "PRIVATE-TOKEN: %s"}[v]
	return Secret{Rule: "gitlab_token", Value: "glpat-" + randString(r, b64urlChars, 20), Context: ctx, Variant: []string{"env", "header"}[v]}
}

// slackToken: bot, user, app, refresh and legacy workspace tokens.
func slackToken(r *rand.Rand, v int) Secret {
	var val string
	switch v {
	case 0:
		val = "xoxb-" + randDigits(r, 12, true) + "-" + randDigits(r, 13, true) + "-" + randString(r, alnumChars, 24)
	case 1:
		val = "xoxp-" + randDigits(r, 12, true) + "-" + randDigits(r, 12, true) + "-" + randDigits(r, 13, true) + "-" + randString(r, hexChars, 32)
	case 2:
		val = "xoxa-2-" + randDigits(r, 12, true) + "-" + randDigits(r, 13, true) + "-" + randString(r, hexChars, 64)
	case 3:
		val = "xoxr-" + randDigits(r, 12, true) + "-" + randDigits(r, 13, true) + "-" + randString(r, alnumChars, 24)
	default:
		val = "xoxs-" + randDigits(r, 11, true) + "-" + randDigits(r, 12, true) + "-" + randDigits(r, 13, true) + "-" + randString(r, hexChars, 64)
	}
	ctx := pick(r, []string{"SLACK_BOT_TOKEN=%s", "slack:\n  token: %s", "curl -H 'Authorization: Bearer %s' https://slack.com/api/auth.test"})
	return Secret{Rule: "slack_token", Value: val, Context: ctx, Variant: val[:5]}
}

// slackWebhook: the whole incoming-webhook URL.
func slackWebhook(r *rand.Rand, v int) Secret {
	val := "https://hooks.slack.com/services/T" + randString(r, upperChars+digitChars, 8+r.IntN(3)) +
		"/B" + randString(r, upperChars+digitChars, 8+r.IntN(3)) + "/" + randString(r, alnumChars, 24)
	ctx := []string{"SLACK_WEBHOOK_URL=%s", `curl -X POST -H 'Content-type: application/json' --data '{"text":"deploy done"}' %s`}[v]
	return Secret{Rule: "slack_webhook", Value: val, Context: ctx, Variant: []string{"env", "curl"}[v]}
}

// stripeLiveKey: secret and restricted live keys, short and long forms.
func stripeLiveKey(r *rand.Rand, v int) Secret {
	prefix := []string{"sk_live_", "rk_live_", "sk_live_"}[v]
	n := []int{24, 24, 99}[v]
	ctx := pick(r, []string{"STRIPE_SECRET_KEY=%s", "stripe.api_key = \"%s\"", "const stripe = require('stripe')('%s');"})
	return Secret{Rule: "stripe_live_key", Value: prefix + randString(r, alnumChars, n), Context: ctx, Variant: prefix + strconv.Itoa(n)}
}

// openaiAPIKey: project, service-account and admin keys (T3BlbkFJ, the
// base64 of "OpenAI", in the middle) and the legacy 48-character form.
func openaiAPIKey(r *rand.Rand, v int) Secret {
	var val string
	switch v {
	case 0, 1, 2:
		prefix := []string{"sk-proj-", "sk-svcacct-", "sk-admin-"}[v]
		val = prefix + randString(r, b64urlChars, 74) + "T3BlbkFJ" + randString(r, b64urlChars, 74)
	default:
		val = "sk-" + randString(r, alnumChars, 20) + "T3BlbkFJ" + randString(r, alnumChars, 20)
	}
	ctx := pick(r, []string{"OPENAI_API_KEY=%s", "client = OpenAI(api_key=\"%s\")", "export OPENAI_API_KEY='%s'"})
	variant := []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "legacy"}[v]
	return Secret{Rule: "openai_api_key", Value: val, Context: ctx, Variant: variant}
}

// anthropicAPIKey: API and admin keys, 93 characters then AA.
func anthropicAPIKey(r *rand.Rand, v int) Secret {
	prefix := []string{"sk-ant-api03-", "sk-ant-admin01-"}[v]
	ctx := pick(r, []string{"ANTHROPIC_API_KEY=%s", "x-api-key: %s", `{"apiKey": "%s"}`})
	return Secret{Rule: "anthropic_api_key", Value: prefix + randString(r, b64urlChars, 93) + "AA", Context: ctx, Variant: prefix}
}

// npmToken: npm_ and 30 random characters with their base62 CRC32.
func npmToken(r *rand.Rand, v int) Secret {
	body := randString(r, alnumChars, 30)
	ctx := []string{"//registry.npmjs.org/:_authToken=%s", "NPM_TOKEN=%s"}[v]
	return Secret{Rule: "npm_token", Value: "npm_" + body + base62CRC(body), Context: ctx, Variant: []string{"npmrc", "env"}[v]}
}

// pypiToken: a macaroon, pypi-AgEIcHlwaS5vcmc ("\x02\x01\x08pypi.org") and
// its base64url rest.
func pypiToken(r *rand.Rand, v int) Secret {
	rest := base64.RawURLEncoding.EncodeToString(randBytes(r, 60+r.IntN(100)))
	ctx := []string{"[pypi]\n  username = __token__\n  password = %s", "TWINE_PASSWORD=%s"}[v]
	return Secret{Rule: "pypi_token", Value: "pypi-AgEIcHlwaS5vcmc" + rest, Context: ctx, Variant: []string{"pypirc", "env"}[v]}
}

// jwtToken: header.payload.signature, the header JSON with an alg.
func jwtToken(r *rand.Rand, v int) Secret {
	enc := base64.RawURLEncoding.EncodeToString
	header := []string{`{"alg":"HS256","typ":"JWT"}`, `{"alg":"RS256","typ":"JWT","kid":"` + randString(r, hexChars, 16) + `"}`, `{"typ":"JWT","alg":"ES256"}`}[v]
	iat := 1_764_000_000 + r.IntN(10_000_000)
	payload := `{"sub":"` + randDigits(r, 10, true) + `","name":"svc-` + randString(r, lowerChars, 6) +
		`","iat":` + strconv.Itoa(iat) + `,"exp":` + strconv.Itoa(iat+3600) + `,"iss":"https://auth.example.internal"}`
	sig := randBytes(r, []int{32, 256, 64}[v])
	ctx := pick(r, []string{"Authorization: Bearer %s", "SESSION_TOKEN=%s", `{"access_token": "%s", "token_type": "Bearer"}`})
	alg := []string{"HS256", "RS256", "ES256"}[v]
	return Secret{Rule: "jwt", Value: enc([]byte(header)) + "." + enc([]byte(payload)) + "." + enc(sig), Context: ctx, Variant: alg}
}
