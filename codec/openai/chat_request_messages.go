package openai

import (
	"fmt"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// chatMessages reads Chat messages into a Request, one message at a time.
type chatMessages struct {
	r       *codec.Request
	leading bool // no user/assistant/tool message seen yet
	toolRun bool // the last message is a user message begun by tool results
	i       int  // index of the message being read, for errors
	err     error
}

// chatReadMessages reads the messages array into r.
func chatReadMessages(r *codec.Request, msgs gjson.Result) error {
	if !msgs.IsArray() {
		return errChatNoMessages
	}
	rd := chatMessages{r: r, leading: true, i: -1}
	msgs.ForEach(func(_, m gjson.Result) bool {
		rd.i++
		rd.err = rd.message(m)
		return rd.err == nil
	})
	return rd.err
}

// message reads one message.
func (rd *chatMessages) message(m gjson.Result) error {
	if !m.IsObject() {
		return fmt.Errorf("messages[%d]: must be an object", rd.i)
	}
	role := m.Get("role").String()
	switch role {
	case "system", "developer":
		return rd.system(codec.Field(m, "content"))
	}
	rd.leading = false
	switch role {
	case "user":
		return rd.user(codec.Field(m, "content"))
	case "assistant":
		return rd.assistant(m)
	case "tool":
		return rd.tool(m, codec.Content(codec.Field(m, "tool_call_id")), codec.Content(codec.Field(m, "name")))
	case "function":
		name := codec.Content(codec.Field(m, "name"))
		return rd.tool(m, name, name)
	}
	return fmt.Errorf("messages[%d]: unknown role %q", rd.i, chatClip(role))
}

// chatClip shortens client input quoted in an error message.
func chatClip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// system reads a system/developer message: into r.System while no other
// message was seen, else as a RoleSystem message.
func (rd *chatMessages) system(c gjson.Result) error {
	if !rd.leading {
		rd.r.AddMessage(codec.RoleSystem)
		rd.toolRun = false
		return rd.content(c, false)
	}
	if c.Type == gjson.String {
		rd.r.System = append(rd.r.System, codec.Content(c))
		return nil
	}
	if !c.IsArray() {
		return nil
	}
	j := -1
	var err error
	c.ForEach(func(_, p gjson.Result) bool {
		j++
		if t := p.Get("type").String(); t != "text" {
			err = fmt.Errorf("messages[%d].content[%d]: system content part type %q is not supported", rd.i, j, chatClip(t))
			return false
		}
		rd.r.System = append(rd.r.System, codec.Content(codec.Field(p, "text")))
		return true
	})
	return err
}

// user reads a user message; right after tool messages its content joins
// their user message.
func (rd *chatMessages) user(c gjson.Result) error {
	if !rd.toolRun {
		rd.r.AddMessage(codec.RoleUser)
	}
	rd.toolRun = false
	return rd.content(c, true)
}

// tool reads a tool (or legacy function) message as a PartToolResult whose
// children are its text.
func (rd *chatMessages) tool(m gjson.Result, id, name []byte) error {
	if !rd.toolRun {
		rd.r.AddMessage(codec.RoleUser)
		rd.toolRun = true
	}
	rd.r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: id, Name: name})
	at := len(rd.r.Parts) - 1
	err := rd.content(codec.Field(m, "content"), true)
	rd.r.Parts[at].Children = len(rd.r.Parts) - 1 - at
	return err
}

// assistant reads an assistant message: reasoning, content, tool calls.
func (rd *chatMessages) assistant(m gjson.Result) error {
	rd.r.AddMessage(codec.RoleAssistant)
	rd.toolRun = false
	think := codec.Field(m, "reasoning_content")
	if think.Type != gjson.String {
		think = codec.Field(m, "reasoning")
	}
	if think.Type == gjson.String && len(think.Raw) > 2 {
		rd.r.AddPart(codec.Part{Kind: codec.PartThinking, Text: codec.Content(think)})
	}
	if err := rd.content(codec.Field(m, "content"), false); err != nil {
		return err
	}
	if fc := m.Get("function_call"); fc.IsObject() {
		name := codec.Content(codec.Field(fc, "name"))
		rd.toolCall(name, name, codec.Field(fc, "arguments"), false)
	}
	calls := m.Get("tool_calls")
	if !calls.IsArray() {
		return nil
	}
	calls.ForEach(func(_, tc gjson.Result) bool {
		id := codec.Content(codec.Field(tc, "id"))
		if tc.Get("type").String() == "custom" {
			c := tc.Get("custom")
			rd.toolCall(id, codec.Content(codec.Field(c, "name")), codec.Field(c, "input"), true)
			return true
		}
		fn := tc.Get("function")
		rd.toolCall(id, codec.Content(codec.Field(fn, "name")), codec.Field(fn, "arguments"), false)
		return true
	})
	return nil
}

// toolCall adds a PartToolCall. Arguments that are a JSON string are kept
// as the string literal (ArgsString); an object some clients send is kept
// raw.
func (rd *chatMessages) toolCall(id, name []byte, args gjson.Result, custom bool) {
	p := codec.Part{Kind: codec.PartToolCall, ID: id, Name: name, Custom: custom}
	switch {
	case args.Type == gjson.String:
		p.Args, p.ArgsString = codec.Raw(args), true
	case args.IsObject():
		p.Args = codec.Raw(args)
	}
	rd.r.AddPart(p)
}

// content reads a content value (string, array of parts, or null) into
// parts of the current message. Images are allowed only when images is set.
func (rd *chatMessages) content(c gjson.Result, images bool) error {
	if c.Type == gjson.String {
		if len(c.Raw) > 2 {
			rd.r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.Content(c)})
		}
		return nil
	}
	if !c.IsArray() {
		return nil
	}
	j := -1
	var err error
	c.ForEach(func(_, p gjson.Result) bool {
		j++
		err = rd.part(p, j, images)
		return err == nil
	})
	return err
}

// part reads one content part.
func (rd *chatMessages) part(p gjson.Result, j int, images bool) error {
	switch t := p.Get("type").String(); t {
	case "text":
		rd.r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.Content(codec.Field(p, "text"))})
	case "refusal":
		rd.r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.Content(codec.Field(p, "refusal"))})
	case "image_url":
		if !images {
			return fmt.Errorf("messages[%d].content[%d]: image parts are not allowed in this message", rd.i, j)
		}
		rd.image(p.Get("image_url"))
	case "input_audio", "file":
		return fmt.Errorf("messages[%d].content[%d]: content part type %q cannot be translated for this model", rd.i, j, t)
	default:
		return fmt.Errorf("messages[%d].content[%d]: unknown content part type %q", rd.i, j, chatClip(t))
	}
	return nil
}

// image adds a PartImage from an image_url object (or a bare URL string):
// a base64 data URL is split into media type and data.
func (rd *chatMessages) image(v gjson.Result) {
	if v.IsObject() {
		v = codec.Field(v, "url")
	}
	url := codec.Content(v)
	if mt, data, ok := codec.ParseDataURL(url); ok {
		rd.r.AddPart(codec.Part{Kind: codec.PartImage, MediaType: mt, Text: data})
		return
	}
	rd.r.AddPart(codec.Part{Kind: codec.PartImage, URL: url})
}
