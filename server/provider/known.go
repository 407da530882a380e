package provider

// KnownModels are the model names the client families slipstream serves
// send by default, listed by /v1/models for providers and aliases that
// serve models only through patterns (and whose upstream list is not
// fetched), so a client's model picker shows names that route.
//
// Claude Code 2.1.197: claude-opus-4-8 by default and for --model opus,
// claude-sonnet-5 for --model sonnet, claude-haiku-4-5-20251001 for
// --model haiku and its small fast calls, claude-fable-5 for --model
// fable (each seen in e2e runs). Codex CLI 0.171.0: the listed entries of its bundled model
// catalog. Gemini: Google's current stable names.
var KnownModels = []string{
	"claude-opus-4-8",
	"claude-sonnet-5",
	"claude-haiku-4-5-20251001",
	"claude-haiku-4-5",
	"claude-fable-5",
	"gpt-6.2-sol",
	"gpt-6.2-astra",
	"gpt-6.1-sol",
	"gpt-6.1-terra",
	"gpt-6-astra",
	"gpt-6-sol",
	"gpt-6-luna",
	"gpt-5.6-sol",
	"gpt-5.6-terra",
	"gpt-5.6-luna",
	"gpt-5.5",
	"gemini-2.5-pro",
	"gemini-2.5-flash",
}
