package guardtest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// awsAccessKeyID: a key-id prefix and 16 base32 characters.
func awsAccessKeyID(r *rand.Rand, v int) Secret {
	prefix := []string{"AKIA", "ASIA", "ABIA", "ACCA"}[v]
	ctx := pick(r, []string{"AWS_ACCESS_KEY_ID=%s", "aws_access_key_id = %s", `"AccessKeyId": "%s"`, "access key %s was rotated"})
	return Secret{Rule: "aws_access_key_id", Value: prefix + randString(r, base32Chars, 16), Context: ctx, Variant: prefix}
}

// awsSecretAccessKey: 40 base64 characters after the keyword gitleaks and
// the detector need: a credentials file, an .env line, the JSON of
// `aws sts get-session-token`, YAML, a Terraform variable.
func awsSecretAccessKey(r *rand.Rand, v int) Secret {
	ctx := []string{
		"aws_secret_access_key = %s",
		"AWS_SECRET_ACCESS_KEY=%s",
		`"SecretAccessKey": "%s"`,
		"secret_access_key: %s",
		`aws_secret_access_key = "%s"`,
	}[v]
	variant := []string{"ini", "env", "json", "yaml", "hcl"}[v]
	return Secret{Rule: "aws_secret_access_key", Value: randString(r, b64Chars, 40), Context: ctx, Variant: variant}
}

// gcpServiceAccountKey: the key file of a service account; Value is its
// private_key as written in the file (a PKCS #8 PEM block with \n escapes).
func gcpServiceAccountKey(r *rand.Rand, v int) Secret {
	project := pick(r, []string{"acme-prod", "billing-svc-staging", "ml-pipeline-42"}) + "-" + randDigits(r, 6, true)
	sa := pick(r, []string{"deployer", "ci-runner", "storage-reader"})
	pem := strings.ReplaceAll(pkcs8RSA(r), "\n", `\n`)
	fields := [][2]string{
		{"type", "service_account"},
		{"project_id", project},
		{"private_key_id", randString(r, hexChars, 40)},
		{"private_key", "%s"},
		{"client_email", sa + "@" + project + ".iam.gserviceaccount.com"},
		{"client_id", randDigits(r, 21, true)},
		{"auth_uri", "https://accounts.google.com/o/oauth2/auth"},
		{"token_uri", "https://oauth2.googleapis.com/token"},
		{"auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"},
		{"client_x509_cert_url", "https://www.googleapis.com/robot/v1/metadata/x509/" + sa + "%40" + project + ".iam.gserviceaccount.com"},
		{"universe_domain", "googleapis.com"},
	}
	var b strings.Builder
	sep, indent, variant := ",\n", "  ", "pretty"
	if v == 1 {
		sep, indent, variant = ",", "", "compact"
	}
	b.WriteString("{")
	if v == 0 {
		b.WriteString("\n")
	}
	for i, f := range fields {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(indent + `"` + f[0] + `": "` + f[1] + `"`)
	}
	if v == 0 {
		b.WriteString("\n")
	}
	b.WriteString("}")
	return Secret{Rule: "gcp_service_account_key", Value: pem, Context: b.String(), Variant: variant}
}

// googleAPIKey: AIza and 35 characters of [0-9A-Za-z_-] (GCP and Google AI
// Studio keys have the same shape).
func googleAPIKey(r *rand.Rand, v int) Secret {
	ctx := []string{"GEMINI_API_KEY=%s", "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=%s", `apiKey: "%s",`}[v]
	variant := []string{"env", "url", "js"}[v]
	return Secret{Rule: "google_api_key", Value: "AIza" + randString(r, b64urlChars, 35), Context: ctx, Variant: variant}
}

// azureStorageKey: a 64-byte account key, base64 (88 characters ending
// ==), in a connection string.
func azureStorageKey(r *rand.Rand, v int) Secret {
	acct := pick(r, []string{"acmeprodstore", "stbackup", "mlartifacts"}) + randDigits(r, 3, false)
	key := base64.StdEncoding.EncodeToString(randBytes(r, 64))
	ctx := "DefaultEndpointsProtocol=https;AccountName=" + acct + ";AccountKey=%s;EndpointSuffix=core.windows.net"
	variant := "connection_string"
	if v == 1 {
		ctx = `AZURE_STORAGE_CONNECTION_STRING="AccountName=` + acct + `;AccountKey=%s"`
		variant = "env"
	}
	return Secret{Rule: "azure_storage_key", Value: key, Context: ctx, Variant: variant}
}
