package gemini

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// addSeeds adds every testdata file matching pattern to the corpus.
func addSeeds(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeRequest reads a client request and writes it for a Gemini
// upstream: no panic, and the output is valid JSON.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f, "request_*.json")
	f.Add([]byte(`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"x","response":{"a":"\"\\\u0000"}}}]}]}`))
	f.Add([]byte(`{"contents":[{"role":"user","parts":[{"functionResponse":{"id":"c","name":"x","response":{"name":"x","content":{"k": [1, "\n"]}},"parts":[{"fileData":{"mimeType":"image/png","fileUri":"gs://b/x"}}]}}]}]}`))
	f.Add([]byte(`{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true,"enum":["x"]}},"propertyOrdering":["a"]},"thinkingConfig":{"thinkingLevel":"HIGH"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		var r codec.Request
		if err := DecodeRequest(&r, body); err != nil {
			return
		}
		out, err := AppendRequest(nil, &r, nil)
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid output for %s:\n%s", body, out)
		}
	})
}

// FuzzDecoder runs an upstream stream through the Decoder and a Gemini
// client Encoder: no panic, and the client stream passes CheckStream (End
// always completes the sequence).
func FuzzDecoder(f *testing.F) {
	addSeeds(f, "stream_*.sse")
	f.Fuzz(func(t *testing.T, upstream []byte) {
		var d Decoder
		var e Encoder
		e.Reset(&clientReq, true)
		var rd sse.Reader
		rd.Reset(bytes.NewReader(upstream))
		defer rd.Release()
		var evs []codec.Event
		var out []byte
		for {
			ev, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return
			}
			if evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data); err != nil {
				continue
			}
			for i := range evs {
				out = e.Append(out, &evs[i])
			}
		}
		for _, ev := range d.End(evs[:0]) {
			out = e.Append(out, &ev)
		}
		if err := CheckStream(out); err != nil {
			t.Fatalf("%v\nupstream:\n%s\nclient:\n%s", err, upstream, out)
		}
	})
}
