package anthropic

import "slipstream/codec"

// appendMessages writes "messages". Anthropic wants alternating user and
// assistant turns: a RoleSystem message counts as user (its text becomes a
// user text block, as docs/TRANSLATION.md says), consecutive turns of one role are
// merged, and turns with nothing writable are skipped without breaking a
// run.
func appendMessages(dst []byte, r *codec.Request) []byte {
	dst = append(dst, `,"messages":[`...)
	first := true
	for i := 0; i < len(r.Messages); {
		if !hasEmittable(r.MessageParts(i)) {
			i++
			continue
		}
		role := turnRole(r.Messages[i].Role)
		j := i + 1
		for j < len(r.Messages) && (turnRole(r.Messages[j].Role) == role || !hasEmittable(r.MessageParts(j))) {
			j++
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendTurn(dst, r, role, i, j)
		i = j
	}
	return append(dst, ']')
}

// turnRole maps a neutral role to the Anthropic turn it joins.
func turnRole(r codec.Role) codec.Role {
	if r == codec.RoleAssistant {
		return codec.RoleAssistant
	}
	return codec.RoleUser
}

// appendTurn writes messages [i, j) as one turn. In a user turn the
// tool_result blocks come first, as Anthropic requires.
func appendTurn(dst []byte, r *codec.Request, role codec.Role, i, j int) []byte {
	if role == codec.RoleAssistant {
		dst = append(dst, `{"role":"assistant","content":[`...)
	} else {
		dst = append(dst, `{"role":"user","content":[`...)
	}
	first := true
	if role == codec.RoleUser {
		dst = appendTurnParts(dst, r, i, j, true, &first)
	}
	dst = appendTurnParts(dst, r, i, j, false, &first)
	return append(dst, "]}"...)
}

// appendTurnParts writes the tool results (results true) or all other
// parts of messages [i, j).
func appendTurnParts(dst []byte, r *codec.Request, i, j int, results bool, first *bool) []byte {
	end := r.Messages[j-1].End
	for k := r.Messages[i].Start; k < end; k++ {
		p := &r.Parts[k]
		isResult := p.Kind == codec.PartToolResult
		if isResult == results && emittable(p) {
			if !*first {
				dst = append(dst, ',')
			}
			*first = false
			dst = appendPart(dst, r, k)
		}
		if isResult {
			k += p.Children
		}
	}
	return dst
}

// hasEmittable reports whether parts hold anything appendPart writes.
func hasEmittable(parts []codec.Part) bool {
	for i := 0; i < len(parts); i++ {
		if emittable(&parts[i]) {
			return true
		}
		if parts[i].Kind == codec.PartToolResult {
			i += parts[i].Children
		}
	}
	return false
}

// emittable reports whether p becomes a block. Empty text is rejected by
// Anthropic; a thinking block is only valid with its signature.
func emittable(p *codec.Part) bool {
	switch p.Kind {
	case codec.PartText:
		return len(p.Text) > 0
	case codec.PartThinking, codec.PartRedactedThinking:
		return len(p.Signature) > 0
	case codec.PartImage:
		return len(p.Text) > 0 || len(p.URL) > 0
	}
	return true
}

// appendPart writes r.Parts[k] as one content block.
func appendPart(dst []byte, r *codec.Request, k int) []byte {
	p := &r.Parts[k]
	switch p.Kind {
	case codec.PartText:
		dst = append(dst, `{"type":"text","text":`...)
		dst = codec.AppendString(dst, p.Text)
		return append(dst, '}')
	case codec.PartImage:
		return appendImage(dst, p)
	case codec.PartToolCall:
		dst = append(dst, `{"type":"tool_use","id":"`...)
		dst = AppendToolID(dst, p.ID)
		dst = append(dst, `","name":`...)
		dst = codec.AppendString(dst, p.Name)
		dst = append(dst, `,"input":`...)
		dst = appendToolInput(dst, p)
		return append(dst, '}')
	case codec.PartToolResult:
		return appendToolResult(dst, r, k)
	case codec.PartThinking:
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = codec.AppendString(dst, p.Text)
		dst = append(dst, `,"signature":`...)
		dst = codec.AppendString(dst, p.Signature)
		return append(dst, '}')
	case codec.PartRedactedThinking:
		dst = append(dst, `{"type":"redacted_thinking","data":`...)
		dst = codec.AppendString(dst, p.Signature)
		return append(dst, '}')
	}
	return dst
}

func appendImage(dst []byte, p *codec.Part) []byte {
	mt, data, url := p.MediaType, p.Text, p.URL
	if len(data) == 0 {
		if m, d, ok := codec.ParseDataURL(url); ok {
			mt, data = m, d
		}
	}
	if len(data) == 0 {
		dst = append(dst, `{"type":"image","source":{"type":"url","url":`...)
		dst = codec.AppendString(dst, url)
		return append(dst, "}}"...)
	}
	dst = append(dst, `{"type":"image","source":{"type":"base64","media_type":`...)
	dst = codec.AppendString(dst, mt)
	dst = append(dst, `,"data":`...)
	dst = codec.AppendString(dst, data)
	return append(dst, "}}"...)
}

// appendToolResult writes a tool_result with its child parts (text and
// images) as content.
func appendToolResult(dst []byte, r *codec.Request, k int) []byte {
	p := &r.Parts[k]
	dst = append(dst, `{"type":"tool_result","tool_use_id":"`...)
	dst = AppendToolID(dst, p.ID)
	dst = append(dst, '"')
	children := r.Parts[k+1 : min(k+1+p.Children, len(r.Parts))]
	if hasResultContent(children) {
		dst = append(dst, `,"content":[`...)
		first := true
		for i := range children {
			c := &children[i]
			if (c.Kind != codec.PartText && c.Kind != codec.PartImage) || !emittable(c) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendPart(dst, r, k+1+i)
		}
		dst = append(dst, ']')
	}
	if p.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	return append(dst, '}')
}

func hasResultContent(children []codec.Part) bool {
	for i := range children {
		c := &children[i]
		if (c.Kind == codec.PartText || c.Kind == codec.PartImage) && emittable(c) {
			return true
		}
	}
	return false
}
