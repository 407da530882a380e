package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// TestUsageFillIn: a Chat upstream that reports no usage still gives an
// Anthropic client real input and output counts, computed locally and
// marked as estimated in the access log.
func TestUsageFillIn(t *testing.T) {
	t.Parallel()
	noUsage := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The quick brown fox jumps over the lazy dog.\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	rec := &recorder{reply: noUsage, contentType: "text/event-stream"}
	up := newUpstream(t, rec)
	yml := strings.ReplaceAll("providers:\n  - {name: c, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\nlog: {access: true}\n", "${UP}", up.URL)
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	base := serveConfig(t, cfg, &logs)
	status, _, got := post(t, base+"/v1/messages", `{"model":"gpt-4o","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Tell me about foxes and dogs, briefly."}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	var delta string
	for _, ev := range strings.Split(string(got), "\n\n") {
		if strings.HasPrefix(ev, "event: message_delta") {
			delta = ev[strings.Index(ev, "data: ")+6:]
		}
	}
	in, out := gjson.Get(delta, "usage.input_tokens").Int(), gjson.Get(delta, "usage.output_tokens").Int()
	if in < 8 || in > 40 || out < 8 || out > 14 {
		t.Fatalf("message_delta usage in=%d out=%d, want local counts: %s", in, out, delta)
	}
	logs.WaitFor(t, 2*time.Second, "estimated=true") // the access log marks the estimate
	if strings.Contains(logs.String(), "k\"") || strings.Contains(logs.String(), "Bearer") {
		t.Fatalf("a credential reached the log:\n%s", logs.String())
	}
}
