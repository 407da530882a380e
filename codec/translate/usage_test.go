package translate

import (
	"testing"

	"slipstream/codec"
)

// TestBodyUsage: each dialect's usage member is found at a body's end and
// read whole; a usage key inside text is not taken for it, and a dialect
// without a row reads as Chat.
func TestBodyUsage(t *testing.T) {
	f := func(d codec.Dialect, body string, want codec.Usage) {
		t.Helper()
		if got := BodyUsage(d, []byte(body)); got != want {
			t.Errorf("%v: got %+v, want %+v", d, got, want)
		}
	}
	all := codec.Usage{Input: 1234, CacheRead: 300, CacheWrite: 100, Output: 567, Reasoning: 89, Known: true}
	f(codec.DialectAnthropic, `{"content":[],"usage":{"input_tokens":834,"cache_creation_input_tokens":100,"cache_read_input_tokens":300,"output_tokens":567,"output_tokens_details":{"thinking_tokens":89}}}`, all)
	chat := `{"choices":[],"usage":{"prompt_tokens":1234,"completion_tokens":567,"prompt_tokens_details":{"cached_tokens":300,"cache_write_tokens":100},"completion_tokens_details":{"reasoning_tokens":89}},"system_fingerprint":"fp"}`
	f(codec.DialectChat, chat, all)
	f(codec.DialectUnknown, chat, all)
	f(codec.DialectResponses, `{"output":[],"usage":{"input_tokens":1234,"input_tokens_details":{"cached_tokens":300,"cache_write_tokens":100},"output_tokens":567,"output_tokens_details":{"reasoning_tokens":89}},"metadata":{}}`, all)
	f(codec.DialectGemini, `{"candidates":[],"usageMetadata": {"promptTokenCount": 1234, "cachedContentTokenCount": 300, "candidatesTokenCount": 478, "thoughtsTokenCount": 89}}`,
		codec.Usage{Input: 1234, CacheRead: 300, Output: 567, Reasoning: 89, Known: true})
	f(codec.DialectGemini, `{"usage":{"prompt_tokens":1}}`, codec.Usage{})
	f(codec.DialectAnthropic, `{"content":[{"type":"text","text":"say \"usage\": {\"input_tokens\":5}"}]}`, codec.Usage{})
	f(codec.DialectChat, ``, codec.Usage{})
}

// FuzzBodyUsage: any bytes in any dialect read without a panic, and
// usage read from nothing is not Known.
func FuzzBodyUsage(f *testing.F) {
	f.Add(uint8(codec.DialectChat), []byte(`{"usage":{"prompt_tokens":1,"completion_tokens":2}}`))
	f.Add(uint8(codec.DialectGemini), []byte(`{"usageMetadata":{"promptTokenCount":1}}`))
	f.Add(uint8(codec.DialectAnthropic), []byte(`"usage":{"input_tokens":"\"usage\":{}"}`))
	f.Fuzz(func(t *testing.T, d uint8, b []byte) {
		u := BodyUsage(fuzzDialect(d), b)
		if u.Known && len(b) < len(`"usage":{}`) {
			t.Fatalf("%q: usage %+v from nothing", b, u)
		}
	})
}

// TestStreamUsageHugeCounts: Anthropic counts at MaxInt64 are capped as
// they are read, so the Input that sums them never wraps negative for a
// client of any other dialect (its usage, metrics and ledger).
func TestStreamUsageHugeCounts(t *testing.T) {
	f := func(usage string) {
		t.Helper()
		start := []byte(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":` + usage + `}}`)
		for _, client := range []codec.Dialect{codec.DialectChat, codec.DialectResponses, codec.DialectGemini} {
			s := AcquireStream(client, codec.DialectAnthropic, &codec.Request{}, true)
			if _, err := s.AppendEvent(nil, []byte("message_start"), start); err != nil {
				t.Fatalf("%v: %s", client, err)
			}
			u := s.Usage()
			ReleaseStream(s)
			if !u.Known || u.Input < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Output < 0 || u.Input < u.CacheRead {
				t.Errorf("%v client, usage %s: got %+v, want known, non-negative, Input counting CacheRead", client, usage, u)
			}
		}
	}
	f(`{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807,"output_tokens":1}`)
	f(`{"input_tokens":9223372036854775807,"cache_creation_input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807,"output_tokens":9223372036854775807}`)
}
