package gemini

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// DecodeRequest reads a Gemini generateContent client request into r, which
// the caller has Reset. body must be valid JSON and must stay unmodified
// while r is in use: fields of r are views into it or into r.Scratch.
//
// The model and the stream flag live in the URL, so r.Model and r.Stream
// are left for the caller. Request fields are accepted in lowerCamelCase and
// snake_case. Mapping (api-formats.md D.1, F):
//   - systemInstruction parts -> r.System; roles user/function -> RoleUser,
//     model -> RoleAssistant; consecutive contents of one role merge.
//   - functionCall -> PartToolCall (Args is the raw object). Without an id
//     it gets call_<n> (n counts ids minted in this request); a
//     functionResponse without an id takes the id of the call of the same
//     name, in order, in the preceding model turn, so pairs stay paired.
//   - functionResponse -> PartToolResult with one text child: the string of
//     {"output"|"result"|"error": string}, else the compacted response
//     object; a response holding "error" sets IsError. Images in
//     functionResponse.parts become further children.
//   - thought:true text -> PartThinking. A thoughtSignature on any other
//     part becomes a PartThinking with empty Text and that Signature right
//     before the part (the neutral form has no per-part signature).
//   - OpenAPI-style parameters/responseSchema get their type names
//     lowercased (OBJECT -> object) so other providers accept them.
//
// Dropped: executableCode and codeExecutionResult parts, non-function tools
// (googleSearch, codeExecution, urlContext ...), safetySettings,
// cachedContent, presence/frequency penalties, seed, and the
// allowedFunctionNames restriction when it names more than one function.
func DecodeRequest(r *codec.Request, body []byte) error {
	root := gjson.Parse(pool.B2S(body))
	if !root.IsObject() {
		return fmt.Errorf("cannot read request: body is not a JSON object")
	}
	var top topFields
	root.ForEach(func(k, v gjson.Result) bool {
		top.set(k.Str, v)
		return true
	})
	if needsScratch(body) {
		r.ReserveScratch(scratchNeed(&top))
	}
	rr := reqReader{r: r}
	rr.system(top.system)
	if err := rr.contents(top.contents); err != nil {
		return err
	}
	rr.tools(top.tools)
	readToolConfig(r, top.toolConfig)
	return rr.generationConfig(top.genConfig)
}

// topFields holds the top-level request members DecodeRequest reads.
type topFields struct {
	contents, system, tools, toolConfig, genConfig gjson.Result
}

func (t *topFields) set(key string, v gjson.Result) {
	switch key {
	case "contents":
		t.contents = v
	case "systemInstruction", "system_instruction":
		t.system = v
	case "tools":
		t.tools = v
	case "toolConfig", "tool_config":
		t.toolConfig = v
	case "generationConfig", "generation_config":
		t.genConfig = v
	}
}

// reqReader carries the state of one DecodeRequest pass.
type reqReader struct {
	r   *codec.Request
	ids int // ids minted so far (call_<n>)
}

// system hoists systemInstruction text parts (or a bare string) into r.System.
func (rr *reqReader) system(v gjson.Result) {
	if v.Type == gjson.String {
		rr.addSystem(codec.Content(v))
		return
	}
	v.Get("parts").ForEach(func(_, p gjson.Result) bool {
		rr.addSystem(codec.Content(p.Get("text")))
		return true
	})
}

func (rr *reqReader) addSystem(text []byte) {
	if len(text) > 0 {
		rr.r.System = append(rr.r.System, text)
	}
}

// contents reads the conversation turns.
func (rr *reqReader) contents(v gjson.Result) error {
	if v.Exists() && v.Type != gjson.Null && !v.IsArray() {
		return fmt.Errorf("contents: must be an array")
	}
	var err error
	i := 0
	v.ForEach(func(_, c gjson.Result) bool {
		err = rr.content(i, c)
		i++
		return err == nil
	})
	return err
}

// content reads one Content {role, parts}.
func (rr *reqReader) content(i int, c gjson.Result) error {
	if !c.IsObject() {
		return fmt.Errorf("contents[%d]: must be an object", i)
	}
	var role, parts gjson.Result
	c.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			role = v
		case "parts":
			parts = v
		}
		return true
	})
	rl, ok := readRole(role.Str)
	if !ok {
		return fmt.Errorf("contents[%d].role: unknown role %q", i, clip(role.Str))
	}
	var err error
	j := 0
	parts.ForEach(func(_, p gjson.Result) bool {
		err = rr.part(rl, i, j, p)
		j++
		return err == nil
	})
	return err
}

func readRole(s string) (codec.Role, bool) {
	switch s {
	case "", "user", "function", "tool":
		return codec.RoleUser, true
	case "model", "assistant":
		return codec.RoleAssistant, true
	case "system":
		return codec.RoleSystem, true
	}
	return 0, false
}

// addPart appends p to the current message, starting a message of role when
// the last one has another role (so consecutive same-role contents merge).
// It returns the index of the part in r.Parts.
func (rr *reqReader) addPart(role codec.Role, p codec.Part) int {
	if last, ok := rr.r.LastRole(); !ok || last != role {
		rr.r.AddMessage(role)
	}
	rr.r.AddPart(p)
	return len(rr.r.Parts) - 1
}

// partFields holds the members of one Part.
type partFields struct {
	text, inline, file, call, resp gjson.Result
	sig                            []byte
	thought                        bool
	dropped                        bool   // a part kind dropped on purpose
	unknown                        string // first unrecognised member
}

func (pf *partFields) set(key string, v gjson.Result) {
	switch key {
	case "text":
		pf.text = v
	case "thought":
		pf.thought = v.Bool()
	case "thoughtSignature", "thought_signature":
		pf.sig = codec.Content(v)
	case "inlineData", "inline_data":
		pf.inline = v
	case "fileData", "file_data":
		pf.file = v
	case "functionCall", "function_call":
		pf.call = v
	case "functionResponse", "function_response":
		pf.resp = v
	case "executableCode", "executable_code", "codeExecutionResult", "code_execution_result":
		pf.dropped = true
	case "videoMetadata", "video_metadata", "partMetadata", "part_metadata", "mediaResolution", "media_resolution":
	default:
		if pf.unknown == "" {
			pf.unknown = key
		}
	}
}

// part reads contents[i].parts[j].
func (rr *reqReader) part(role codec.Role, i, j int, p gjson.Result) error {
	var pf partFields
	p.ForEach(func(k, v gjson.Result) bool {
		pf.set(k.Str, v)
		return true
	})
	if len(pf.sig) > 0 && !pf.thought {
		rr.addPart(role, codec.Part{Kind: codec.PartThinking, Signature: pf.sig})
	}
	switch {
	case pf.text.Exists():
		rr.text(role, &pf)
	case pf.inline.Exists():
		rr.addPart(role, codec.Part{Kind: codec.PartImage,
			MediaType: codec.Content(getEither(pf.inline, "mimeType", "mime_type")),
			Text:      codec.Content(pf.inline.Get("data"))})
	case pf.file.Exists():
		rr.addPart(role, codec.Part{Kind: codec.PartImage,
			MediaType: codec.Content(getEither(pf.file, "mimeType", "mime_type")),
			URL:       codec.Content(getEither(pf.file, "fileUri", "file_uri"))})
	case pf.call.Exists():
		rr.toolCall(role, pf.call)
	case pf.resp.Exists():
		rr.toolResult(role, pf.resp)
	case pf.thought && len(pf.sig) > 0:
		rr.addPart(role, codec.Part{Kind: codec.PartThinking, Signature: pf.sig})
	case pf.unknown != "" && !pf.dropped && len(pf.sig) == 0:
		return fmt.Errorf("contents[%d].parts[%d]: unsupported part %q", i, j, clip(pf.unknown))
	}
	return nil
}

// text adds a text or thought part; empty text carries nothing.
func (rr *reqReader) text(role codec.Role, pf *partFields) {
	t := codec.Content(pf.text)
	if pf.thought {
		if len(t) > 0 || len(pf.sig) > 0 {
			rr.addPart(role, codec.Part{Kind: codec.PartThinking, Text: t, Signature: pf.sig})
		}
		return
	}
	if len(t) > 0 {
		rr.addPart(role, codec.Part{Kind: codec.PartText, Text: t})
	}
}

// toolCall adds a functionCall part.
func (rr *reqReader) toolCall(role codec.Role, fc gjson.Result) {
	p := codec.Part{Kind: codec.PartToolCall}
	fc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			p.ID = codec.Content(v)
		case "name":
			p.Name = codec.Content(v)
		case "args":
			if v.IsObject() {
				p.Args = codec.Raw(v)
			}
		}
		return true
	})
	if len(p.ID) == 0 {
		p.ID = rr.mintID()
	}
	rr.addPart(role, p)
}

// mintID appends call_<n> to r.Scratch and returns a view of it.
func (rr *reqReader) mintID() []byte {
	s := rr.r.Scratch
	start := len(s)
	s = append(s, "call_"...)
	s = codec.AppendInt(s, int64(rr.ids))
	rr.ids++
	rr.r.Scratch = s
	return s[start:len(s):len(s)]
}

// toolResult adds a functionResponse as a PartToolResult and its children.
func (rr *reqReader) toolResult(role codec.Role, fr gjson.Result) {
	var resp, parts gjson.Result
	p := codec.Part{Kind: codec.PartToolResult}
	fr.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			p.ID = codec.Content(v)
		case "name":
			p.Name = codec.Content(v)
		case "response":
			resp = v
		case "parts":
			parts = v
		}
		return true
	})
	if len(p.ID) == 0 {
		p.ID = rr.matchCall(p.Name)
	}
	text, isErr, simple := simpleResponse(resp)
	p.IsError = isErr
	if !simple && resp.Exists() && resp.Type != gjson.Null {
		text = rr.escapedCompact(codec.Raw(resp))
	}
	at := rr.addPart(role, p)
	n := 0
	if len(text) > 0 {
		rr.addPart(role, codec.Part{Kind: codec.PartText, Text: text})
		n++
	}
	parts.ForEach(func(_, c gjson.Result) bool {
		if d := getEither(c, "inlineData", "inline_data"); d.Exists() {
			rr.addPart(role, codec.Part{Kind: codec.PartImage,
				MediaType: codec.Content(getEither(d, "mimeType", "mime_type")),
				Text:      codec.Content(d.Get("data"))})
			n++
		}
		return true
	})
	rr.r.Parts[at].Children = n
}

// simpleResponse recognises a response that is one string: a bare string, or
// an object whose only member output, result or error is a string. isErr
// reports an error member (in any response object).
func simpleResponse(resp gjson.Result) (text []byte, isErr, simple bool) {
	if resp.Type == gjson.String {
		return codec.Content(resp), false, true
	}
	if !resp.IsObject() {
		return nil, false, false
	}
	members := 0
	resp.ForEach(func(k, v gjson.Result) bool {
		members++
		switch k.Str {
		case "error":
			isErr = true
			fallthrough
		case "output", "result":
			if v.Type == gjson.String {
				text = codec.Content(v)
			}
		}
		return true
	})
	if members != 1 || text == nil {
		return nil, isErr, false
	}
	return text, isErr, true
}

// escapedCompact appends raw, compacted and escaped as string content, to
// r.Scratch and returns a view of it.
func (rr *reqReader) escapedCompact(raw []byte) []byte {
	s := rr.r.Scratch
	start := len(s)
	s = appendEscapedCompact(s, raw)
	rr.r.Scratch = s
	return s[start:len(s):len(s)]
}

// appendEscapedCompact appends valid JSON raw without insignificant
// whitespace, escaped as JSON string content, in one pass.
func appendEscapedCompact(dst, raw []byte) []byte {
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inStr && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		switch c {
		case '"':
			inStr = !inStr
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
			if i+1 < len(raw) {
				i++
				if raw[i] == '"' || raw[i] == '\\' {
					dst = append(dst, '\\')
				}
				dst = append(dst, raw[i])
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// matchCall returns the id of the call named name that the next result of
// that name answers: the k-th such call in the latest model turn, where k
// counts the results of that name already read after it. With no match it
// mints a fresh id.
func (rr *reqReader) matchCall(name []byte) []byte {
	r := rr.r
	m := len(r.Messages) - 1
	for m >= 0 && r.Messages[m].Role != codec.RoleAssistant {
		m--
	}
	if m < 0 {
		return rr.mintID()
	}
	k := 0
	for _, p := range r.Parts[r.Messages[m].End:] {
		if p.Kind == codec.PartToolResult && bytes.Equal(p.Name, name) {
			k++
		}
	}
	for _, p := range r.MessageParts(m) {
		if p.Kind == codec.PartToolCall && bytes.Equal(p.Name, name) {
			if k == 0 {
				return p.ID
			}
			k--
		}
	}
	return rr.mintID()
}

// getEither returns the member camel, or snake when camel is absent.
func getEither(v gjson.Result, camel, snake string) gjson.Result {
	if r := v.Get(camel); r.Exists() {
		return r
	}
	return v.Get(snake)
}

// clip shortens s for quoting in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// equalFold reports whether s equals upper, ignoring ASCII case.
func equalFold(s, upper string) bool { return strings.EqualFold(s, upper) }
