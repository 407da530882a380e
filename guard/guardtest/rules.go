// Package guardtest generates the test corpus of the guardrails: secrets in
// every format the built-in detectors cover, realistic coding-agent request
// bodies in the four client dialects with those secrets embedded, and
// realistic content holding no secret at all. Everything is generated,
// deterministically from a seed (math/rand/v2 PCG), and never a real
// secret: values are random with a valid structure (prefixes, lengths,
// alphabets, checksums).
//
// It is test support: it allocates freely and panics on a programming error
// (an unknown dialect or rule), never on generated data.
package guardtest

import "strings"

// Rules are the names of the built-in detectors, in the order Secrets
// generates them. They are the rule names package guard reports.
var Rules = []string{
	"aws_access_key_id",
	"aws_secret_access_key",
	"gcp_service_account_key",
	"google_api_key",
	"azure_storage_key",
	"github_token",
	"gitlab_token",
	"slack_token",
	"slack_webhook",
	"stripe_live_key",
	"openai_api_key",
	"anthropic_api_key",
	"npm_token",
	"pypi_token",
	"private_key",
	"jwt",
	"database_url",
	"email",
	"phone",
	"payment_card",
	"iban",
	"us_ssn",
}

// Secret is one generated secret.
//
// Value is what must not reach a provider, per rule:
//   - database_url: the password only (the rest of the URL is Context);
//   - aws_secret_access_key: the 40-character key (the keyword before it is
//     Context);
//   - azure_storage_key: the 88-character AccountKey (the connection string
//     around it is Context);
//   - gcp_service_account_key: the private_key of the key file as written
//     in the file, a PEM block whose line breaks are the two characters \n
//     (the JSON key file around it is Context);
//   - private_key: the whole PEM block, line breaks included;
//   - slack_webhook: the whole https://hooks.slack.com/services/... URL;
//   - every other rule: the token, address or number as written (phones,
//     cards and IBANs with the separators they were written with).
//
// Context is the text the value is embedded in, with one %s where Value
// goes (see Text). For the four rules above the context is part of what a
// detector needs; for the others it is realism only: a detector must find
// Value wherever it stands. Variant names the format variant (a prefix, a
// key type, a country, a scheme) so that a miss can be traced to it.
type Secret struct {
	Rule, Value string
	Context     string
	Variant     string
}

// Text returns the secret embedded in its context.
func (s Secret) Text() string {
	if s.Context == "" {
		return s.Value
	}
	return strings.Replace(s.Context, "%s", s.Value, 1)
}

// Dialects are the client dialects Traffic and NegativeBody write.
var Dialects = []string{DialectAnthropic, DialectChat, DialectResponses, DialectGemini}

// Dialect names, as the server names its routes' dialects.
const (
	DialectAnthropic = "anthropic"
	DialectChat      = "openai-chat"
	DialectResponses = "openai-responses"
	DialectGemini    = "gemini"
)
