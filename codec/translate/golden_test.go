package translate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current translators")

// scenarios are the directories of testdata/scenarios. Each holds the
// client request in every dialect and, per upstream dialect, what is there
// of stream.<d>.sse, response.<d>.json and error.<d>.json.
var scenarios = []string{
	"plain_text",
	"multi_turn_system",
	"tool_result",
	"parallel_tools",
	"image",
	"thinking",
	"error_before_first_byte",
	"error_midstream",
}

// errorStatus is the HTTP status of every error.<d>.json fixture.
const errorStatus = 429

func TestGolden(t *testing.T) {
	for _, sc := range scenarios {
		for _, p := range pairs() {
			t.Run(sc+"/"+p.String(), func(t *testing.T) {
				if !requestsReady(p) {
					t.Skipf("%s: request translation not wired yet", p)
				}
				goldenPair(t, sc, p)
			})
		}
	}
}

// goldenPair checks one scenario for one pair: the translated request, the
// translated stream, the translated body, and the translated error body,
// each where the scenario has a fixture.
func goldenPair(t *testing.T, sc string, p pair) {
	r, _ := decodeClient(t, sc, p.client)
	base := sc + "/" + p.String()

	out, err := AppendRequest(p.upstream, nil, r, upstreamModels[p.upstream])
	if err != nil {
		t.Fatalf("cannot write %s request: %s", p.upstream, err)
	}
	mustJSON(t, "request", out)
	golden(t, base+".request.json", out)

	up := fileNames[p.upstream]
	if !streamsReady(p) {
		t.Logf("%s: stream translation not wired yet", p)
		return
	}
	if stream := readFile(t, "scenarios/"+sc+"/stream."+up+".sse"); stream != nil {
		out := translateStream(t, p, r, readEvents(t, stream))
		if err := CheckStream(p.client, out); err != nil {
			t.Errorf("translated stream fails the %s grammar: %s\n%s", p.client, err, out)
		}
		golden(t, base+".stream.sse", out)
	}
	if body := readFile(t, "scenarios/"+sc+"/response."+up+".json"); body != nil {
		out := translateBody(t, p, r, body)
		mustJSON(t, "response", out)
		golden(t, base+".response.json", out)
	}
	if body := readFile(t, "scenarios/"+sc+"/error."+up+".json"); body != nil {
		e := DecodeError(p.upstream, body, errorStatus)
		out := AppendErrorObject(p.client, nil, &e)
		mustJSON(t, "error", out)
		golden(t, base+".response.json", out)
		if e.Status != errorStatus || e.Kind != codec.ErrRateLimit {
			t.Errorf("error status/kind = %d/%d, want %d/%d", e.Status, e.Kind, errorStatus, codec.ErrRateLimit)
		}
		// The non-streamed Stream path must write the same body.
		s := AcquireStream(p.client, p.upstream, r, false)
		viaStream := s.AppendError(nil, &e)
		ReleaseStream(s)
		if !bytes.Equal(viaStream, out) {
			t.Errorf("Stream.AppendError body differs from AppendErrorObject:\n got %s\nwant %s", viaStream, out)
		}
	}
}

func mustJSON(t *testing.T, what string, b []byte) {
	t.Helper()
	if !gjson.ValidBytes(b) {
		t.Errorf("translated %s is not valid JSON:\n%s", what, b)
	}
}

// golden compares got with testdata/golden/<name>, or rewrites it under
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden %s (run with -update and review it): %s", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden at byte %d:\n got %s\nwant %s", name, firstDiff(got, want), got, want)
	}
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
