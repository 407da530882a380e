package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const sameConfig = `
providers:
  - name: anth
    kind: anthropic
    base_url: ${UP}
    keys: ["sk-ant-upstream"]
    models: ["claude-*"]
  - name: chat
    kind: openai
    api: chat
    base_url: ${UP}/v1
    keys: ["sk-openai-upstream"]
    models: ["gpt-4*"]
  - name: resp
    kind: openai
    api: responses
    base_url: ${UP}/v1
    keys: ["sk-openai-upstream"]
    models: ["gpt-5*"]
aliases:
  fast: resp/gpt-5-mini-2026
  sonnet: anth/claude-sonnet-4-5-20990101
timeouts:
  keepalive: 0s
`

// routeCase is one same-dialect route with a realistic body and the
// upstream's answer, streamed and not.
type routeCase struct {
	path, upPath string
	body         string
	stream       string
	json         string
}

var sameRoutes = map[string]routeCase{
	"anthropic": {
		path: "/v1/messages?beta=true", upPath: "/v1/messages?beta=true",
		body:   `{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=1"},{"type":"text","text":"Be terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi \u00e9\n"}]}],"context_management":{"edits":[]},"unknown_future_field":{"a":[1,2,3]},"stream":%s}`,
		stream: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		json:   `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}}`,
	},
	"chat": {
		path: "/v1/chat/completions", upPath: "/v1/chat/completions",
		body:   `{"model":"gpt-4.1","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"hi"}],"stream_options":{"include_usage":true},"x_vendor":{"k":true},"stream":%s}`,
		stream: "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\ndata: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		json:   `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
	},
	"responses": {
		path: "/v1/responses", upPath: "/v1/responses",
		body:   `{"model":"gpt-5-codex","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"perm"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"ls"}],"id":"msg_client_1"},{"type":"future_item_kind","payload":"keep me"}],"tools":[{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}],"store":false,"include":["reasoning.encrypted_content"],"stream":%s}`,
		stream: "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1,\"total_tokens\":4}}}\n\n",
		json:   `{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}`,
	},
}

func TestSameDialectByteIdentical(t *testing.T) {
	t.Parallel()
	for name, rc := range sameRoutes {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", name, stream), func(t *testing.T) {
				rec := &recorder{reply: rc.json}
				if stream {
					rec.reply, rec.contentType = rc.stream, "text/event-stream"
				}
				up := newUpstream(t, rec)
				base, _ := startServer(t, sameConfig, up.URL)
				body := fmt.Sprintf(rc.body, fmt.Sprint(stream))
				status, hdr, got := post(t, base+rc.path, body, "Authorization", "Bearer client-key", "X-Api-Key", "client-key", "Anthropic-Version", "2023-06-01", "Anthropic-Beta", "a,b", "Connection", "keep-alive, X-Hop", "X-Hop", "1")
				if status != 200 {
					t.Fatalf("status %d: %s", status, got)
				}
				upBody, upPath, upHdr := rec.last()
				mustEqual(t, "upstream body", upBody, []byte(body))
				mustEqual(t, "client body", got, []byte(rec.reply))
				if upPath != rc.upPath {
					t.Fatalf("upstream path %q, want %q", upPath, rc.upPath)
				}
				if hdr.Get("X-Request-Id") != "req_up_1" {
					t.Fatalf("upstream request id not passed through: %v", hdr)
				}
				checkUpstreamHeaders(t, name, upHdr)
			})
		}
	}
}

func checkUpstreamHeaders(t *testing.T, dialect string, h map[string][]string) {
	t.Helper()
	get := func(k string) string {
		for hk, v := range h {
			if strings.EqualFold(hk, k) && len(v) > 0 {
				return v[0]
			}
		}
		return ""
	}
	if get("X-Hop") != "" {
		t.Fatalf("header named in Connection was forwarded")
	}
	switch dialect {
	case "anthropic":
		if get("X-Api-Key") != "sk-ant-upstream" || get("Authorization") != "" {
			t.Fatalf("credentials not replaced: %v", h)
		}
		if get("Anthropic-Version") != "2023-06-01" || get("Anthropic-Beta") != "a,b" {
			t.Fatalf("anthropic headers not passed through: %v", h)
		}
	default:
		if get("Authorization") != "Bearer sk-openai-upstream" || get("X-Api-Key") != "" {
			t.Fatalf("credentials not replaced: %v", h)
		}
	}
}

func TestSameDialectAliasEditsOnlyTheModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, alias, model, body string }{
		{"/v1/responses", "fast", "gpt-5-mini-2026", `{"model":"fast","input":"hi","stream":false,"tail":"ok"}`},
		{"/v1/messages", "sonnet", "claude-sonnet-4-5-20990101", `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}], "model" : "sonnet" }`},
	} {
		rec := &recorder{reply: `{}`}
		up := newUpstream(t, rec)
		base, _ := startServer(t, sameConfig, up.URL)
		status, _, got := post(t, base+tc.path, tc.body)
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		upBody, _, _ := rec.last()
		want := strings.Replace(tc.body, `"`+tc.alias+`"`, `"`+tc.model+`"`, 1)
		mustEqual(t, "aliased upstream body", upBody, []byte(want))
	}
}

func TestSameDialectUpstreamErrorPassesThrough(t *testing.T) {
	t.Parallel()
	rec := &recorder{status: 529, reply: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
	up := newUpstream(t, rec)
	base, _ := startServer(t, sameConfig, up.URL)
	status, _, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`)
	if status != 529 || !bytes.Equal(got, []byte(rec.reply)) {
		t.Fatalf("got %d %s", status, got)
	}
}
