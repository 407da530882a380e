package openai

import (
	"slipstream/codec"
)

// chatAppendMessages appends the messages array's elements: the system
// message, then each message split or kept as Chat needs.
func chatAppendMessages(dst []byte, r *codec.Request) []byte {
	if len(r.System) > 0 {
		dst = append(dst, `{"role":"system","content":`...)
		dst = codec.AppendJoined(dst, r.System, `\n\n`)
		dst = append(dst, '}')
	}
	for i := range r.Messages {
		parts := r.MessageParts(i)
		switch r.Messages[i].Role {
		case codec.RoleSystem:
			dst = chatComma(dst)
			dst = append(dst, `{"role":"system","content":`...)
			dst = chatAppendTexts(dst, parts)
			dst = append(dst, '}')
		case codec.RoleAssistant:
			dst = chatAppendAssistant(dst, parts)
		default:
			dst = chatAppendUser(dst, parts)
		}
	}
	return dst
}

// chatComma appends the separator before an array element unless the
// element is the first one (dst ends with '[').
func chatComma(dst []byte) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '[' {
		return append(dst, ',')
	}
	return dst
}

// chatChildren returns how many parts after parts[k] (a tool result) are
// its content, clamped to the slice.
func chatChildren(parts []codec.Part, k int) int {
	return max(0, min(parts[k].Children, len(parts)-k-1))
}

// chatAppendTexts appends one JSON string holding the text parts of parts
// joined with "\n\n"; other parts are skipped.
func chatAppendTexts(dst []byte, parts []codec.Part) []byte {
	dst = append(dst, '"')
	dst = chatAppendTextContent(dst, parts)
	return append(dst, '"')
}

// chatAppendTextContent is chatAppendTexts without the quotes.
func chatAppendTextContent(dst []byte, parts []codec.Part) []byte {
	first := true
	for i := range parts {
		if parts[i].Kind != codec.PartText {
			continue
		}
		if !first {
			dst = append(dst, `\n\n`...)
		}
		first = false
		dst = append(dst, parts[i].Text...)
	}
	return dst
}

// chatAppendUser appends a user message: one tool message per tool result,
// then a user message for the rest (text, images, and the images of the
// tool results). A message of only tool results writes no user message.
func chatAppendUser(dst []byte, parts []codec.Part) []byte {
	results := 0
	for k := 0; k < len(parts); k++ {
		if parts[k].Kind != codec.PartToolResult {
			continue
		}
		n := chatChildren(parts, k)
		dst = chatAppendToolMessage(dst, &parts[k], parts[k+1:k+1+n])
		results++
		k += n
	}
	rest, textOnly := chatCountRest(parts)
	if rest == 0 && results > 0 {
		return dst
	}
	dst = chatComma(dst)
	dst = append(dst, `{"role":"user","content":`...)
	switch {
	case rest == 0:
		dst = append(dst, `""`...)
	case rest == 1 && textOnly && results == 0:
		dst = chatAppendTexts(dst, parts) // the one text part
	default:
		dst = chatAppendRest(dst, parts)
	}
	return append(dst, '}')
}

// chatAppendToolMessage appends {"role":"tool",...} for result p whose
// content is children; only their text is written.
func chatAppendToolMessage(dst []byte, p *codec.Part, children []codec.Part) []byte {
	dst = chatComma(dst)
	dst = append(dst, `{"role":"tool","tool_call_id":`...)
	dst = codec.AppendString(dst, p.ID)
	dst = append(dst, `,"content":"`...)
	if p.IsError {
		dst = append(dst, `Error: `...)
	}
	dst = chatAppendTextContent(dst, children)
	return append(dst, `"}`...)
}

// chatRestPart reports whether part k of parts goes to the user message
// that follows the tool messages; inResult says it is a tool result's child.
func chatRestPart(p *codec.Part, inResult bool) bool {
	return p.Kind == codec.PartImage || p.Kind == codec.PartText && !inResult
}

// chatCountRest counts the parts of the trailing user message and reports
// whether they are all text.
func chatCountRest(parts []codec.Part) (n int, textOnly bool) {
	textOnly = true
	for k := 0; k < len(parts); k++ {
		p := &parts[k]
		if p.Kind == codec.PartToolResult {
			c := chatChildren(parts, k)
			for j := k + 1; j <= k+c; j++ {
				if chatRestPart(&parts[j], true) {
					n, textOnly = n+1, false
				}
			}
			k += c
			continue
		}
		if chatRestPart(p, false) {
			n++
			textOnly = textOnly && p.Kind == codec.PartText
		}
	}
	return n, textOnly
}

// chatAppendRest appends the trailing user message's content as an array
// of text and image_url parts.
func chatAppendRest(dst []byte, parts []codec.Part) []byte {
	dst = append(dst, '[')
	for k := 0; k < len(parts); k++ {
		p := &parts[k]
		if p.Kind == codec.PartToolResult {
			c := chatChildren(parts, k)
			for j := k + 1; j <= k+c; j++ {
				if chatRestPart(&parts[j], true) {
					dst = chatAppendPart(dst, &parts[j])
				}
			}
			k += c
			continue
		}
		if chatRestPart(p, false) {
			dst = chatAppendPart(dst, p)
		}
	}
	return append(dst, ']')
}

// chatAppendPart appends a text or image_url content part.
func chatAppendPart(dst []byte, p *codec.Part) []byte {
	dst = chatComma(dst)
	if p.Kind == codec.PartText {
		dst = append(dst, `{"type":"text","text":`...)
		dst = codec.AppendString(dst, p.Text)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"image_url","image_url":{"url":"`...)
	if len(p.URL) > 0 {
		dst = append(dst, p.URL...)
	} else {
		dst = codec.AppendDataURL(dst, p.MediaType, p.Text)
	}
	return append(dst, `"}}`...)
}

// chatAppendAssistant appends an assistant message: text parts joined as
// content (null when there are only tool calls) and tool_calls. Thinking
// is dropped.
func chatAppendAssistant(dst []byte, parts []codec.Part) []byte {
	texts, calls := 0, 0
	for i := range parts {
		switch parts[i].Kind {
		case codec.PartText:
			texts++
		case codec.PartToolCall:
			calls++
		}
	}
	dst = chatComma(dst)
	dst = append(dst, `{"role":"assistant","content":`...)
	if texts == 0 && calls > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = chatAppendTexts(dst, parts)
	}
	if calls > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i := range parts {
			if parts[i].Kind == codec.PartToolCall {
				dst = chatAppendToolCall(dst, &parts[i])
			}
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// chatAppendToolCall appends one tool_calls element.
func chatAppendToolCall(dst []byte, p *codec.Part) []byte {
	dst = chatComma(dst)
	dst = append(dst, `{"id":`...)
	dst = codec.AppendString(dst, p.ID)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = codec.AppendString(dst, p.Name)
	dst = append(dst, `,"arguments":`...)
	dst = ChatAppendArgsString(dst, p)
	return append(dst, `}}`...)
}

// ChatAppendArgsString appends a tool call's arguments as a JSON string literal
// whose content is JSON text, as both OpenAI dialects want: a string Args is
// copied (an empty one becomes "{}"), an object is compacted and quoted, no
// Args gives "{}", and a custom call's free text becomes {"input": text}.
func ChatAppendArgsString(dst []byte, p *codec.Part) []byte {
	if p.Custom {
		dst = append(dst, `"{\"input\":`...)
		if len(p.Args) == 0 {
			dst = append(dst, `\"\"`...)
		} else {
			dst = codec.AppendEscaped(dst, p.Args)
		}
		return append(dst, `}"`...)
	}
	switch {
	case len(p.Args) == 0 || p.ArgsString && len(p.Args) <= 2:
		return append(dst, `"{}"`...)
	case p.ArgsString:
		return append(dst, p.Args...)
	}
	return ChatAppendQuotedCompact(dst, p.Args)
}

// ChatAppendQuotedCompact appends valid JSON raw, without insignificant
// whitespace, as a JSON string literal: codec.Compact and codec.AppendQuoted
// fused into one pass so that no scratch buffer is needed.
func ChatAppendQuotedCompact(dst, raw []byte) []byte {
	dst = append(dst, '"')
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inStr && c == '\\':
			dst = append(dst, '\\', '\\')
			if i+1 < len(raw) {
				i++
				dst = chatAppendEscapedByte(dst, raw[i])
			}
		case c == '"':
			inStr = !inStr
			dst = append(dst, '\\', '"')
		case !inStr && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
		default:
			dst = chatAppendEscapedByte(dst, c)
		}
	}
	return append(dst, '"')
}

// chatAppendEscapedByte appends c escaped for a JSON string.
func chatAppendEscapedByte(dst []byte, c byte) []byte {
	if c == '"' || c == '\\' {
		return append(dst, '\\', c)
	}
	if c < 0x20 {
		return append(dst, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
	}
	return append(dst, c)
}
