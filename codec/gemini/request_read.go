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
// snake_case. Mapping (https://ai.google.dev/api/generate-content, docs/TRANSLATION.md):
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
		rr.addSystem(codec.StrContent(member(codec.Raw(p), "text", "text")))
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

// partFields holds the raw members of one Part.
type partFields struct {
	text, inline, file, call, resp []byte
	sig                            []byte // escaped content
	thought                        bool
	dropped                        bool   // a part kind dropped on purpose
	unknown                        []byte // first unrecognised member
}

// readPart fills pf from the raw part object p.
func (pf *partFields) read(p []byte) {
	m := codec.ObjectMembers(p)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		pf.set(k, v)
	}
}

func (pf *partFields) set(key, v []byte) {
	switch string(key) {
	case "text":
		pf.text = v
	case "thought":
		pf.thought = codec.IsTrue(v)
	case "thoughtSignature", "thought_signature":
		// The validator-skipping sentinel is not a signature of any
		// model: it must not come back as a thinking block.
		if sig := codec.StrContent(v); string(sig) != skipSignature {
			pf.sig = sig
		}
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
		if pf.unknown == nil {
			pf.unknown = key
		}
	}
}

// part reads contents[i].parts[j].
func (rr *reqReader) part(role codec.Role, i, j int, p gjson.Result) error {
	var pf partFields
	pf.read(codec.Raw(p))
	if len(pf.sig) > 0 && !pf.thought {
		rr.addPart(role, codec.Part{Kind: codec.PartThinking, Signature: pf.sig})
	}
	switch {
	case pf.text != nil:
		rr.text(role, &pf)
	case pf.inline != nil:
		rr.addPart(role, inlineImage(pf.inline))
	case pf.file != nil:
		rr.addPart(role, fileImage(pf.file))
	case pf.call != nil:
		rr.toolCall(role, pf.call)
	case pf.resp != nil:
		rr.toolResult(role, pf.resp)
	case pf.thought && len(pf.sig) > 0:
		rr.addPart(role, codec.Part{Kind: codec.PartThinking, Signature: pf.sig})
	case pf.unknown != nil && !pf.dropped && len(pf.sig) == 0:
		return fmt.Errorf("contents[%d].parts[%d]: unsupported part %q", i, j, clip(string(pf.unknown)))
	}
	return nil
}

// inlineImage reads an inlineData blob.
// fileImage reads a fileData object as an image part by URL.
func fileImage(raw []byte) codec.Part {
	return codec.Part{Kind: codec.PartImage,
		MediaType: codec.StrContent(member(raw, "mimeType", "mime_type")),
		URL:       codec.StrContent(member(raw, "fileUri", "file_uri"))}
}

func inlineImage(raw []byte) codec.Part {
	return codec.Part{Kind: codec.PartImage,
		MediaType: codec.StrContent(member(raw, "mimeType", "mime_type")),
		Text:      codec.StrContent(member(raw, "data", "data"))}
}

// text adds a text or thought part; empty text carries nothing.
func (rr *reqReader) text(role codec.Role, pf *partFields) {
	t := codec.StrContent(pf.text)
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
func (rr *reqReader) toolCall(role codec.Role, fc []byte) {
	p := codec.Part{Kind: codec.PartToolCall}
	m := codec.ObjectMembers(fc)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "id":
			p.ID = codec.StrContent(v)
		case "name":
			p.Name = codec.StrContent(v)
		case "args":
			if codec.IsObject(v) {
				p.Args = v
			}
		}
	}
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
func (rr *reqReader) toolResult(role codec.Role, fr []byte) {
	var resp, parts []byte
	p := codec.Part{Kind: codec.PartToolResult}
	m := codec.ObjectMembers(fr)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "id":
			p.ID = codec.StrContent(v)
		case "name":
			p.Name = codec.StrContent(v)
		case "response":
			resp = v
		case "parts":
			parts = v
		}
	}
	if len(p.ID) == 0 {
		p.ID = rr.matchCall(p.Name)
	}
	inner, isErr := unwrapResponse(resp)
	p.IsError = isErr
	text := codec.StrContent(inner)
	if text == nil && len(inner) > 0 && string(inner) != "null" {
		text = rr.escapedCompact(inner)
	}
	at := rr.addPart(role, p)
	n := 0
	if len(text) > 0 {
		rr.addPart(role, codec.Part{Kind: codec.PartText, Text: text})
		n++
	}
	a := codec.ArrayElems(parts)
	for c, ok := a.Next(); ok; c, ok = a.Next() {
		if d := member(c, "inlineData", "inline_data"); d != nil {
			rr.addPart(role, inlineImage(d))
			n++
		} else if d := member(c, "fileData", "file_data"); d != nil {
			rr.addPart(role, fileImage(d))
			n++
		}
	}
	rr.r.Parts[at].Children = n
}

// unwrapResponse returns what a functionResponse.response holds for the
// model to read. Clients wrap a tool's output in an object: Gemini CLI and
// pi as {output} or {error}, @google/genai users often {result}, and
// @ai-sdk/google (OpenCode) as {name, content}. When the object holds one
// of output, result, error or content (and at most a string name beside
// it), that member's value is returned if it is a string, and for content
// (which carries a JSON tool output as is) whatever it is; otherwise resp
// itself. isErr reports an error member.
func unwrapResponse(resp []byte) (inner []byte, isErr bool) {
	var key, val []byte
	n := 0 // members other than a string name
	m := codec.ObjectMembers(resp)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "name":
			if codec.StrContent(v) != nil {
				continue
			}
		case "error":
			isErr = true
			key, val = k, v
		case "output", "result", "content":
			key, val = k, v
		}
		n++
	}
	if n != 1 || key == nil || (codec.StrContent(val) == nil && string(key) != "content") {
		return resp, isErr
	}
	return val, isErr
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
