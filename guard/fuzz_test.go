package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	pad := strings.Repeat("let me look at this change then run again ", 4)
	for _, sec := range newGen(5).secrets() {
		text := fmt.Sprintf(sec.context, sec.value)
		f.Add([]byte(`{"messages":[{"role":"user","content":"`+text+`"}]}`), uint16(len(text)/2))
		// Past the first 64-byte block, where the vector scan filters
		// anchors by their neighbours.
		f.Add([]byte(`{"messages":[{"role":"user","content":"`+pad+text+pad+`"}]}`), uint16(len(pad)))
	}
	f.Add(agentBody(2, 4<<10), uint16(100))
	f.Add([]byte(`{"a":"[REDACTED:github_token:abcdef] -----BEGIN PRIVATE KEY-----\n"}`), uint16(30))
}

// FuzzScanBody: no panic; every match lies inside the input; the redacted
// output of valid JSON is valid JSON; a second scan of the output finds no
// redactable match left.
func FuzzScanBody(f *testing.F) {
	fuzzSeeds(f)
	s := mustCompile(f, allRules())
	f.Fuzz(func(t *testing.T, body []byte, _ uint16) {
		m := AcquireMatches()
		defer ReleaseMatches(m)
		s.ScanBody(body, m)
		for k := 0; k < m.Len(); k++ {
			h := m.Hit(k)
			if h.Start < 0 || h.End > len(body) || h.Start >= h.End {
				t.Fatalf("bad span %+v", h)
			}
		}
		out := m.AppendRedacted(nil, body, nil, "")
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("redaction broke JSON:\n in %q\nout %q", body, out)
		}
	})
}

// FuzzStream: a Scanner fed the input cut at any offset (and byte by byte)
// equals the one-shot scan, with every detector (runs held whole) and with
// the default set and a literal (runs held only when they may begin a
// match).
func FuzzStream(f *testing.F) {
	fuzzSeeds(f)
	sets := []*Set{mustCompile(f, allRules()), mustCompile(f, Config{Literals: []Literal{{Name: "lit", Values: []string{"Falcon-9"}}}})}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		for _, s := range sets {
			want := oneShot(s, in)
			sc := s.AcquireScanner()
			c := int(cut) % (len(in) + 1)
			if got := streamed(sc, in, c); !bytes.Equal(got, want) {
				t.Fatalf("cut %d:\n  in %q\n got %q\nwant %q", c, in, got, want)
			}
			var got []byte
			for k := range in {
				got = sc.Feed(got, in[k:k+1])
			}
			if got = sc.Flush(got); !bytes.Equal(got, want) {
				t.Fatalf("byte by byte:\n  in %q\n got %q\nwant %q", in, got, want)
			}
			ReleaseScanner(sc)
		}
	})
}

// FuzzRestorer: no panic; streamed at any cut equals one-shot; text without
// a vault placeholder comes out unchanged.
func FuzzRestorer(f *testing.F) {
	v := NewVault(VaultConfig{})
	v.Put("k", []byte("[REDACTED:github_token:abcdef]"), []byte("ghp_secret\n\"x\""))
	f.Add([]byte("a [REDACTED:github_token:abcdef] b [REDACTED:x:000000]"), uint16(5))
	f.Add([]byte("[[[REDACTED:github_token:abcde[REDACTED:github_token:abcdef]"), uint16(12))
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		r := AcquireRestorer(v, "k", 1)
		defer ReleaseRestorer(r)
		want := r.Flush(r.Feed(nil, in))
		if !bytes.Contains(in, []byte("abcdef]")) && !bytes.Equal(want, in) {
			t.Fatalf("changed text without a placeholder: %q -> %q", in, want)
		}
		c := int(cut) % (len(in) + 1)
		r.Reset()
		r.v, r.scope, r.levels = v, "k", 1
		got := r.Feed(nil, in[:c])
		got = r.Flush(r.Feed(got, in[c:]))
		if !bytes.Equal(got, want) {
			t.Fatalf("cut %d:\n  in %q\n got %q\nwant %q", c, in, got, want)
		}
	})
}

// FuzzBlockScan: the vector scan (anchorMasks, anchors filtered by their
// neighbours for the default set) finds exactly what the byte sweeps and
// the table walk find, with the default set and with every detector.
func FuzzBlockScan(f *testing.F) {
	fuzzSeeds(f)
	var pairs [][2]*Set
	for _, cfg := range []Config{{}, allRules()} {
		fast, ref := mustCompile(f, cfg), mustCompile(f, cfg)
		ref.blocks = false
		pairs = append(pairs, [2]*Set{fast, ref})
	}
	f.Fuzz(func(t *testing.T, body []byte, _ uint16) {
		for _, p := range pairs {
			a, b := AcquireMatches(), AcquireMatches()
			p[0].ScanBody(body, a)
			p[1].ScanBody(body, b)
			if a.Len() != b.Len() {
				t.Fatalf("%d matches, the sweep finds %d in %q", a.Len(), b.Len(), body)
			}
			for k := range a.Len() {
				if a.Hit(k) != b.Hit(k) {
					t.Fatalf("match %d: %+v, the sweep finds %+v", k, a.Hit(k), b.Hit(k))
				}
			}
			ReleaseMatches(a)
			ReleaseMatches(b)
		}
	})
}
