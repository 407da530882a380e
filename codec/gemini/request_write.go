package gemini

import (
	"errors"

	"slipstream/codec"
)

// ErrMultipleCandidates is returned by AppendRequest for n > 1: the stream
// translators follow one candidate only.
var ErrMultipleCandidates = errors.New("cannot translate n > 1 to Gemini: only one candidate is supported")

// skipSignature is the thoughtSignature sent on a functionCall that has no
// signature from Gemini (history from another provider or a client that
// dropped it); Gemini 3 rejects such calls otherwise (https://ai.google.dev/gemini-api/docs/thought-signatures).
const skipSignature = "skip_thought_signature_validator"

// AppendRequest appends a Gemini generateContent request for r to dst. The
// model and the stream flag belong in the URL, so model is ignored and no
// model or stream member is written.
//
// Mapping (docs/TRANSLATION.md): r.System -> systemInstruction (one text part
// joined with "\n\n"); assistant -> model; mid-conversation system messages
// -> user text; consecutive turns of one Gemini role merge into one content.
// Tool results -> functionResponse parts named via r.ToolName, response
// {"output": text} or {"error": text}; their images follow as inlineData
// parts. Tool call args: objects verbatim, JSON strings unescaped (empty ->
// {}, invalid or not an object -> {"_raw": <the string>}), custom calls ->
// {"input": <text>}. Images -> inlineData; a URL that is not a data URL ->
// fileData.fileUri (Gemini only fetches Files API and gs:// URIs itself).
// A PartThinking's Signature is written as the thoughtSignature of the next
// part of its turn (a lone one as an empty text part); a functionCall with
// none gets "skip_thought_signature_validator" unless an earlier call of its
// turn had a real one.
//
// Dropped: call ids (Gemini pairs calls and responses by name and order),
// thinking text (not replayed; its signature is kept), redacted thinking,
// parallel_tool_calls, tool strictness, output format names.
//
// model is used only to choose the thinking control: a Gemini 3 model
// (thinkingLevelModel) gets thinkingLevel for an effort without a budget.
func AppendRequest(dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	if r.N > 1 {
		return dst, ErrMultipleCandidates
	}
	w := reqWriter{r: r, dst: append(dst, '{'), levels: thinkingLevelModel(model)}
	w.contents()
	w.system()
	w.tools()
	w.toolConfig()
	w.generationConfig()
	return append(w.dst, '}'), nil
}

// reqWriter carries the state of one AppendRequest pass.
type reqWriter struct {
	r      *codec.Request
	dst    []byte
	levels bool // the model takes thinkingLevel (Gemini 3)

	role      byte   // role of the open content: 0 none, 'u' user, 'm' model
	ncontents int    // contents written
	nparts    int    // parts written in the open content
	sig       []byte // signature waiting for the next part
	sigSet    bool   // a call in the open content carried a real signature
}

func (w *reqWriter) system() {
	if len(w.r.System) == 0 {
		return
	}
	w.dst = append(w.dst, `,"systemInstruction":{"parts":[{"text":`...)
	w.dst = codec.AppendJoined(w.dst, w.r.System, `\n\n`)
	w.dst = append(w.dst, `}]}`...)
}

// contents writes "contents":[...] (always present: Gemini requires it).
func (w *reqWriter) contents() {
	w.dst = append(w.dst, `"contents":[`...)
	for i := range w.r.Messages {
		role := byte('u')
		if w.r.Messages[i].Role == codec.RoleAssistant {
			role = 'm'
		}
		parts := w.r.MessageParts(i)
		for j := 0; j < len(parts); j++ {
			p := &parts[j]
			if p.Kind == codec.PartToolResult {
				n := min(max(p.Children, 0), len(parts)-j-1)
				w.toolResult(role, p, parts[j+1:j+1+n])
				j += n
				continue
			}
			w.part(role, p)
		}
		w.flushSignature(role)
	}
	w.closeContent()
	w.dst = append(w.dst, ']')
}

// openPart starts a part in a content of role, opening the content first
// when the open one has another role.
func (w *reqWriter) openPart(role byte) {
	if w.role != role {
		w.closeContent()
		if w.ncontents > 0 {
			w.dst = append(w.dst, ',')
		}
		w.ncontents++
		w.dst = append(w.dst, `{"role":"`...)
		if role == 'm' {
			w.dst = append(w.dst, "model"...)
		} else {
			w.dst = append(w.dst, "user"...)
		}
		w.dst = append(w.dst, `","parts":[`...)
		w.role, w.nparts, w.sigSet = role, 0, false
	}
	if w.nparts > 0 {
		w.dst = append(w.dst, ',')
	}
	w.nparts++
}

// closePart ends a part, adding the waiting signature (or, for a call,
// the skip sentinel when its turn has no real signature yet).
func (w *reqWriter) closePart(call bool) {
	switch {
	case w.sig != nil:
		w.dst = append(w.dst, `,"thoughtSignature":`...)
		w.dst = codec.AppendString(w.dst, w.sig)
		w.sig = nil
		w.sigSet = w.sigSet || call
	case call && !w.sigSet:
		w.dst = append(w.dst, `,"thoughtSignature":"`+skipSignature+`"`...)
	}
	w.dst = append(w.dst, '}')
}

func (w *reqWriter) closeContent() {
	if w.role != 0 {
		w.dst = append(w.dst, "]}"...)
		w.role = 0
	}
}

// flushSignature writes a signature left over at the end of a message as
// an empty text part.
func (w *reqWriter) flushSignature(role byte) {
	if w.sig == nil {
		return
	}
	w.openPart(role)
	w.dst = append(w.dst, `{"text":""`...)
	w.closePart(false)
}

// part writes one part other than a tool result.
func (w *reqWriter) part(role byte, p *codec.Part) {
	switch p.Kind {
	case codec.PartText:
		if len(p.Text) == 0 {
			return
		}
		w.openPart(role)
		w.dst = append(w.dst, `{"text":`...)
		w.dst = codec.AppendString(w.dst, p.Text)
		w.closePart(false)
	case codec.PartImage:
		w.openPart(role)
		w.dst = appendImage(w.dst, p)
		w.closePart(false)
	case codec.PartToolCall:
		w.openPart(role)
		w.dst = w.appendCall(w.dst, p)
		w.closePart(true)
	case codec.PartThinking:
		if len(p.Signature) > 0 {
			w.flushSignature(role)
			w.sig = p.Signature
		}
	}
}
