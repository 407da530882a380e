package openai

import (
	"slipstream/codec"
)

// Namespace tools (Codex's `{"type":"namespace","name":ns,"tools":[...]}`)
// have no equivalent outside Responses, so DecodeResponsesRequest flattens
// each nested function into a plain function tool named
//
//	ns + inner             when ns ends with '_' or inner starts with '_'
//	                       (Codex's MCP convention: "mcp__srv__app" + "_search"
//	                       gives the legacy flat name "mcp__srv__app_search")
//	ns + "__" + inner      otherwise ("collaboration__spawn_agent")
//
// Input function_call items that carry a `namespace` get the same flat name,
// so history and tools agree. The flat names are written into
// Request.Scratch behind a 4-byte header (0x00, len(ns) big-endian in two
// bytes, len(separator)) so that ResponsesEncoder can split a call of a
// flattened tool back into `name` + `namespace` for Codex. JSON-escaped
// content never holds a raw 0x00 byte, so the header cannot be mistaken.

const nsHeaderLen = 4

// nsSeparator returns the separator placed between a namespace and a
// nested tool name.
func nsSeparator(ns, inner []byte) string {
	if len(ns) > 0 && ns[len(ns)-1] == '_' || len(inner) > 0 && inner[0] == '_' {
		return ""
	}
	return "__"
}

// nsFlatSize is the Scratch space appendFlatName needs.
func nsFlatSize(ns, inner []byte) int {
	return nsHeaderLen + len(ns) + len(nsSeparator(ns, inner)) + len(inner)
}

// appendFlatName appends the header and the flat name to r.Scratch (which
// must have room: see ReserveScratch) and returns the name as a view into it.
func appendFlatName(r *codec.Request, ns, inner []byte) []byte {
	if len(ns) > 0xffff {
		ns = ns[:0] // unreachable in practice; keep the header honest
	}
	sep := nsSeparator(ns, inner)
	r.Scratch = append(r.Scratch, 0, byte(len(ns)>>8), byte(len(ns)), byte(len(sep)))
	start := len(r.Scratch)
	r.Scratch = append(r.Scratch, ns...)
	r.Scratch = append(r.Scratch, sep...)
	r.Scratch = append(r.Scratch, inner...)
	// Not capped: splitFlatName finds the view by its end of capacity.
	return r.Scratch[start:len(r.Scratch)]
}

// splitFlatName reports whether name is a tool name that
// DecodeResponsesRequest flattened out of a namespace in req, and if so
// returns the namespace and the nested name (views into req.Scratch).
func splitFlatName(req *codec.Request, name []byte) (ns, inner []byte, ok bool) {
	t := req.FindTool(name)
	if t == nil {
		return nil, nil, false
	}
	o, ok := respOffsetIn(t.Name, req.Scratch)
	if !ok || o < nsHeaderLen || req.Scratch[o-nsHeaderLen] != 0 {
		return nil, nil, false
	}
	h := req.Scratch[o-nsHeaderLen : o]
	nsLen, sepLen := int(h[1])<<8|int(h[2]), int(h[3])
	if nsLen == 0 || nsLen+sepLen > len(t.Name) {
		return nil, nil, false
	}
	return t.Name[:nsLen], t.Name[nsLen+sepLen:], true
}

// respOffsetIn returns where s starts inside buf when s is a view into buf's
// backing array (both end at the same last element of capacity).
func respOffsetIn(s, buf []byte) (int, bool) {
	if len(s) == 0 || cap(buf) == 0 || cap(s) > cap(buf) {
		return 0, false
	}
	if &s[:cap(s)][cap(s)-1] != &buf[:cap(buf)][cap(buf)-1] {
		return 0, false
	}
	o := cap(buf) - cap(s)
	if o+len(s) > len(buf) {
		return 0, false
	}
	return o, true
}
