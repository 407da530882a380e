package translate

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// FuzzRequest feeds any body through every request translator: no panic,
// and whatever a writer produces is valid JSON. Seeds: every scenario's
// request for every pair, and every structured-output fixture.
func FuzzRequest(f *testing.F) {
	for _, sc := range scenarios {
		for _, p := range pairs() {
			if body := readFile(f, "scenarios/"+sc+"/request."+fileNames[p.client]+".json"); body != nil {
				f.Add(uint8(p.client), uint8(p.upstream), body)
			}
		}
	}
	f.Add(uint8(codec.DialectAnthropic), uint8(codec.DialectResponses), readFile(f, "roundtrip/request.anthropic.json"))
	for _, d := range allDialects {
		names, _ := filepath.Glob("testdata/structured/*." + fileNames[d] + ".json")
		for _, n := range names {
			body := readFile(f, "structured/"+filepath.Base(n))
			for _, u := range allDialects {
				f.Add(uint8(d), uint8(u), body)
			}
		}
	}
	f.Fuzz(func(t *testing.T, c, u uint8, body []byte) {
		client, upstream := fuzzDialect(c), fuzzDialect(u)
		if !requestsReady(pair{client, upstream}) || !gjson.ValidBytes(body) {
			return
		}
		var r codec.Request
		if err := DecodeRequest(client, &r, body); err != nil {
			return
		}
		out, err := AppendRequest(upstream, nil, &r, upstreamModels[upstream])
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("%s -> %s wrote invalid JSON:\n%s", client, upstream, out)
		}
	})
}

// FuzzStream feeds any SSE bytes through every stream translator, the way
// the server does (a malformed event ends the output with AppendError, the
// end of input calls AppendEnd): no panic, and the client output always
// passes the client dialect's grammar checker, whatever the upstream sent.
// Seeds: every scenario's upstream stream for every pair.
func FuzzStream(f *testing.F) {
	for _, sc := range scenarios {
		for _, p := range pairs() {
			if stream := readFile(f, "scenarios/"+sc+"/stream."+fileNames[p.upstream]+".sse"); stream != nil {
				f.Add(uint8(p.client), uint8(p.upstream), stream)
			}
		}
	}
	req := new(codec.Request)
	f.Fuzz(func(t *testing.T, c, u uint8, stream []byte) {
		client, upstream := fuzzDialect(c), fuzzDialect(u)
		if !streamsReady(pair{client, upstream}) {
			return
		}
		req.Reset()
		req.Model, req.Created, req.IncludeUsage = []byte("client-model"), testCreated, true
		out := fuzzTranslate(client, upstream, req, stream)
		if err := CheckStream(client, out); err != nil {
			t.Fatalf("%s -> %s: output fails the %s grammar: %s\n%s", upstream, client, client, err, out)
		}
	})
}

// FuzzBody feeds any bytes as a non-streamed upstream body: no panic, and
// the client gets one valid JSON body (the translation or an error).
// Seeds: every scenario's upstream body for every pair.
func FuzzBody(f *testing.F) {
	for _, sc := range scenarios {
		for _, p := range pairs() {
			if body := readFile(f, "scenarios/"+sc+"/response."+fileNames[p.upstream]+".json"); body != nil {
				f.Add(uint8(p.client), uint8(p.upstream), body)
			}
		}
	}
	req := new(codec.Request)
	f.Fuzz(func(t *testing.T, c, u uint8, body []byte) {
		client, upstream := fuzzDialect(c), fuzzDialect(u)
		if !streamsWired(client) || !streamsWired(upstream) {
			return
		}
		req.Reset()
		req.Model, req.Created = []byte("client-model"), testCreated
		s := AcquireStream(client, upstream, req, false)
		defer ReleaseStream(s)
		out, err := s.AppendBody(nil, body)
		if err != nil {
			e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("bad upstream body")}
			out = s.AppendError(out, &e)
		}
		out = s.AppendEnd(out)
		if !gjson.ValidBytes(out) {
			t.Fatalf("%s -> %s: body is not valid JSON:\n%s", upstream, client, out)
		}
	})
}

// fuzzTranslate runs stream through a Stream as the server would.
func fuzzTranslate(client, upstream codec.Dialect, req *codec.Request, stream []byte) []byte {
	s := AcquireStream(client, upstream, req, true)
	defer ReleaseStream(s)
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out []byte
	for !s.Done() {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("upstream read failed")}
			return s.AppendError(out, &e)
		}
		if ev.IsComment() {
			continue
		}
		if out, err = s.AppendEvent(out, ev.Name, ev.Data); err != nil {
			e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("malformed upstream event")}
			return s.AppendError(out, &e)
		}
	}
	return s.AppendEnd(out)
}

func fuzzDialect(b uint8) codec.Dialect { return allDialects[int(b)%len(allDialects)] }
