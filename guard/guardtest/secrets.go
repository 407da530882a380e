package guardtest

import "math/rand/v2"

// Secrets returns perRule secrets for every rule in Rules, in Rules order.
// A rule's format variants are taken in turn (variant i%n for the i-th
// secret), so perRule at least the largest count in Variants covers every
// variant; the random parts come from seed.
func Secrets(seed uint64, perRule int) []Secret {
	r := newRand(seed, 1)
	out := make([]Secret, 0, perRule*len(Rules))
	for _, rule := range Rules {
		g := generators[rule]
		for i := range perRule {
			out = append(out, g.gen(r, i%g.variants))
		}
	}
	return out
}

// Variants returns how many format variants rule has (0 for an unknown
// rule).
func Variants(rule string) int { return generators[rule].variants }

// generator makes one secret of a rule in one of its variants.
type generator struct {
	variants int
	gen      func(r *rand.Rand, variant int) Secret
}

// generators is the one table of rule -> generator.
var generators = map[string]generator{
	"aws_access_key_id":       {4, awsAccessKeyID},
	"aws_secret_access_key":   {5, awsSecretAccessKey},
	"gcp_service_account_key": {2, gcpServiceAccountKey},
	"google_api_key":          {3, googleAPIKey},
	"azure_storage_key":       {2, azureStorageKey},
	"github_token":            {6, githubToken},
	"gitlab_token":            {2, gitlabToken},
	"slack_token":             {5, slackToken},
	"slack_webhook":           {2, slackWebhook},
	"stripe_live_key":         {3, stripeLiveKey},
	"openai_api_key":          {4, openaiAPIKey},
	"anthropic_api_key":       {2, anthropicAPIKey},
	"npm_token":               {2, npmToken},
	"pypi_token":              {2, pypiToken},
	"private_key":             {5, privateKey},
	"jwt":                     {3, jwtToken},
	"database_url":            {8, databaseURL},
	"email":                   {4, email},
	"phone":                   {9, phone},
	"payment_card":            {8, paymentCard},
	"iban":                    {8, iban},
	"us_ssn":                  {2, usSSN},
}
