package anthropic

// AppendToolID appends id (escaped JSON string content) made safe for
// Anthropic, whose tool ids must match ^[a-zA-Z0-9_-]+$: every other byte
// becomes '_' and an empty id becomes "_". The mapping is deterministic, so
// a tool_use.id and the tool_result.tool_use_id answering it stay paired.
// Valid ids pass unchanged.
func AppendToolID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, '_')
	}
	for _, c := range id {
		if !idByte(c) {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
