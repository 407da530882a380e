package guard

// detector identifies a built-in detector; its name is detectorNames[d].
type detector uint8

const (
	dAWSKeyID detector = iota
	dAWSSecret
	dGCPKey
	dGoogleAPIKey
	dAzureStorage
	dGitHub
	dGitLab
	dSlackToken
	dSlackWebhook
	dStripe
	dOpenAI
	dAnthropic
	dNPM
	dPyPI
	dPrivateKey
	dJWT
	dDatabaseURL
	dEmail
	dPhone
	dCard
	dIBAN
	dSSN
	numDetectors
)

var detectorNames = [numDetectors]string{
	"aws_access_key_id", "aws_secret_access_key", "gcp_service_account_key", "google_api_key",
	"azure_storage_key", "github_token", "gitlab_token", "slack_token", "slack_webhook",
	"stripe_live_key", "openai_api_key", "anthropic_api_key", "npm_token", "pypi_token",
	"private_key", "jwt", "database_url", "email", "phone", "payment_card", "iban", "us_ssn",
}

// optIn are the PII detectors: off unless a rule names them. They anchor on
// digits or on every '@', which costs several times the credential scan on
// code and logs, and they match data agents legitimately work with.
var optIn = [numDetectors]bool{dEmail: true, dPhone: true, dCard: true, dIBAN: true, dSSN: true}

// Detectors returns the names of the built-in detectors, credentials first,
// then the opt-in PII detectors.
func Detectors() []string {
	return append([]string(nil), detectorNames[:]...)
}

// DefaultOn reports whether the named built-in detector is in the default
// rule set (every credential detector; the PII detectors are opt-in).
func DefaultOn(name string) bool {
	d, ok := detectorByName(name)
	return ok && !optIn[d]
}

func detectorByName(name string) (detector, bool) {
	for d, n := range detectorNames {
		if n == name {
			return detector(d), true
		}
	}
	return 0, false
}

// matcher looks for a match of one detector around the anchor byte b[i].
// It returns the match [s, e) on hit; on need, s is the earliest byte a
// match could start at. Matchers never look more than lookBehind bytes before
// the anchor, never match across a break byte except private_key and phone
// (whose matchers report need themselves), and never return need when final.
type matcher func(b []byte, i int, final bool) (s, e int, r result)

var matchers = [numDetectors]matcher{
	dAWSKeyID: matchAWSKeyID, dAWSSecret: matchAWSSecret, dGCPKey: matchGCPKeyID,
	dGoogleAPIKey: matchGoogleAPIKey, dAzureStorage: matchAzureKey, dGitHub: matchGitHub,
	dGitLab: matchGitLab, dSlackToken: matchSlackToken, dSlackWebhook: matchSlackWebhook,
	dStripe: matchStripe, dOpenAI: matchOpenAI, dAnthropic: matchAnthropic, dNPM: matchNPM,
	dPyPI: matchPyPI, dPrivateKey: matchPrivateKey, dJWT: matchJWT, dDatabaseURL: matchDatabaseURL,
	dEmail: matchEmail, dPhone: matchPhone, dCard: matchCard, dIBAN: matchIBAN, dSSN: matchSSN,
}

// anchors lists, per detector, the bytes its matcher is called at. The scan
// visits every byte once and calls matchers only at anchor bytes, so the
// rarer the anchors the faster the scan.
var anchors = [numDetectors]string{
	dAWSKeyID: "A", dAWSSecret: "_A", dGCPKey: "_", dGoogleAPIKey: "A", dAzureStorage: "A",
	dGitHub: "_", dGitLab: "-", dSlackToken: "-", dSlackWebhook: "B", dStripe: "_",
	dOpenAI: "-", dAnthropic: "-", dNPM: "_", dPyPI: "-", dPrivateKey: "-", dJWT: "J",
	dDatabaseURL: "@", dEmail: "@", dPhone: "+(0123456789", dCard: "0123456789",
	dIBAN: "0123456789", dSSN: "0123456789",
}

// prefixes lists, per detector, how its matches begin, for the streaming
// hold-back: a trailing run that begins like one of them is held. Detectors
// whose match follows its anchor (keyword values, PII numbers, PEM) hold
// through their matcher's need instead; email and iban hold every run.
var prefixes = [numDetectors][]string{
	dAWSKeyID:     {"AKIA", "ASIA", "ABIA", "ACCA"},
	dGoogleAPIKey: {"AIza"},
	dGitHub:       {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
	dGitLab:       {"glpat-"},
	dSlackToken:   {"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"},
	dSlackWebhook: {"hooks.slack.com/services/"},
	dStripe:       {"sk_live_", "rk_live_"},
	dOpenAI:       {"sk-"},
	dAnthropic:    {"sk-ant-"},
	dNPM:          {"npm_"},
	dPyPI:         {"pypi-AgEIcHlwaS5vcmc"},
	dPrivateKey:   {"-----BEGIN "},
	dJWT:          {"eyJ"},
	dDatabaseURL: {"postgres://", "postgresql://", "mysql://", "mongodb://", "mongodb+srv://",
		"redis://", "rediss://", "amqp://", "amqps://"},
}

// holdRuns are the detectors whose matches may begin like any word.
var holdRuns = [numDetectors]bool{dEmail: true, dIBAN: true}

// lookBehind bounds how far before an anchor a matcher reads (the scheme of
// a database URL); streaming scanners keep that much emitted context, and
// more when an anchor in it still needs input (a keyword whose value has
// not arrived).
const lookBehind = 320

// maxWord bounds a match that contains no break byte: the streaming scanners
// hold back at most this many bytes of an unbroken run (a JWT is the longest).
const maxWord = maxJWT

// maxPEM bounds a private key block, header to footer. A longer block is
// redacted up to the bound and the rest passes (see docs/GUARDRAILS.md).
const maxPEM = 16 << 10
