package openai

import (
	"fmt"
	"strings"

	"slipstream/codec"
)

// chatDumpRequest renders a neutral Request as compact text for f-tests.
func chatDumpRequest(r *codec.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model=%s stream=%v usage=%v", r.Model, r.Stream, r.IncludeUsage)
	if r.MaxTokens != 0 {
		fmt.Fprintf(&b, " max=%d", r.MaxTokens)
	}
	if r.Temperature != nil {
		fmt.Fprintf(&b, " temp=%s", r.Temperature)
	}
	if r.TopP != nil {
		fmt.Fprintf(&b, " top_p=%s", r.TopP)
	}
	if r.N != 0 {
		fmt.Fprintf(&b, " n=%d", r.N)
	}
	if r.Reasoning.Effort != 0 {
		fmt.Fprintf(&b, " effort=%d", r.Reasoning.Effort)
	}
	if r.Parallel != 0 {
		fmt.Fprintf(&b, " parallel=%d", r.Parallel)
	}
	if r.ToolChoice.Mode != 0 {
		fmt.Fprintf(&b, " choice=%d:%s", r.ToolChoice.Mode, r.ToolChoice.Name)
	}
	if r.Format.Kind != 0 {
		fmt.Fprintf(&b, " format=%d:%s:%s:%v", r.Format.Kind, r.Format.Name, r.Format.Schema, r.Format.Strict)
	}
	for _, s := range r.Stop {
		fmt.Fprintf(&b, " stop=%q", s)
	}
	b.WriteByte('\n')
	for _, s := range r.System {
		fmt.Fprintf(&b, "system %s\n", s)
	}
	roles := [...]string{"user", "assistant", "system"}
	for i, m := range r.Messages {
		b.WriteString(roles[m.Role] + ":")
		for _, p := range r.MessageParts(i) {
			b.WriteByte(' ')
			b.WriteString(chatDumpPart(&p))
		}
		b.WriteByte('\n')
	}
	for _, t := range r.Tools {
		fmt.Fprintf(&b, "tool %d %s %q %s strict=%v format=%s\n", t.Kind, t.Name, t.Description, t.Schema, t.Strict, t.Format)
	}
	return b.String()
}

func chatDumpPart(p *codec.Part) string {
	switch p.Kind {
	case codec.PartText:
		return fmt.Sprintf("text(%s)", p.Text)
	case codec.PartImage:
		return fmt.Sprintf("image(%s|%s|%s)", p.MediaType, p.Text, p.URL)
	case codec.PartToolCall:
		return fmt.Sprintf("call(%s,%s,%s,str=%v,custom=%v)", p.ID, p.Name, p.Args, p.ArgsString, p.Custom)
	case codec.PartToolResult:
		return fmt.Sprintf("result(%s,%s,err=%v,n=%d)", p.ID, p.Name, p.IsError, p.Children)
	case codec.PartThinking:
		return fmt.Sprintf("thinking(%s|%s)", p.Text, p.Signature)
	case codec.PartRedactedThinking:
		return fmt.Sprintf("redacted(%s)", p.Signature)
	}
	return "?"
}

var chatEventNames = [...]string{
	codec.EventStart: "start", codec.EventText: "text", codec.EventThinking: "thinking",
	codec.EventSignature: "signature", codec.EventRedacted: "redacted", codec.EventToolCall: "call",
	codec.EventToolArgs: "args", codec.EventBlockStop: "stop", codec.EventUsage: "usage",
	codec.EventFinish: "finish", codec.EventEnd: "end", codec.EventError: "error",
}

// chatDumpEvent renders one Event as a line for golden tests.
func chatDumpEvent(b *strings.Builder, ev *codec.Event) {
	fmt.Fprintf(b, "%s block=%d", chatEventNames[ev.Kind], ev.Block)
	if ev.Text != nil {
		fmt.Fprintf(b, " text=%s", ev.Text)
	}
	if ev.ID != nil || ev.Name != nil {
		fmt.Fprintf(b, " id=%s name=%s", ev.ID, ev.Name)
	}
	if ev.Custom {
		b.WriteString(" custom")
	}
	if ev.Stop != 0 {
		fmt.Fprintf(b, " stop=%d", ev.Stop)
	}
	if u := ev.Usage; u.Known {
		fmt.Fprintf(b, " usage=in:%d,cr:%d,cw:%d,out:%d,rs:%d", u.Input, u.CacheRead, u.CacheWrite, u.Output, u.Reasoning)
	}
	if ev.Kind == codec.EventError {
		fmt.Fprintf(b, " status=%d kind=%d code=%s msg=%s", ev.Err.Status, ev.Err.Kind, ev.Err.Code, ev.Err.Message)
	}
	b.WriteByte('\n')
}
