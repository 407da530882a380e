package upstream

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"
)

func TestDecoders(t *testing.T) {
	const plain = "data: {\"a\":1}\n\ndata: [DONE]\n\n"
	var gz, zl, raw bytes.Buffer
	w := gzip.NewWriter(&gz)
	io.WriteString(w, plain)
	w.Close()
	z := zlib.NewWriter(&zl)
	io.WriteString(z, plain)
	z.Close()
	f, _ := flate.NewWriter(&raw, flate.DefaultCompression)
	io.WriteString(f, plain)
	f.Close()
	check := func(enc string, body []byte) {
		t.Helper()
		if !CanDecode([]byte(enc)) {
			t.Fatalf("CanDecode(%q) = false", enc)
		}
		r, err := NewDecoder(bytes.NewReader(body), []byte(enc))
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != plain {
			t.Fatalf("%s stream: %q %v", enc, got, err)
		}
		whole, err := AppendDecoded([]byte("x"), body, []byte(enc), 1<<20)
		if err != nil || string(whole) != "x"+plain {
			t.Fatalf("%s body: %q %v", enc, whole, err)
		}
		if _, err := AppendDecoded(nil, body, []byte(enc), 10); err != ErrDecodedTooLarge {
			t.Fatalf("%s: a body decoding past the limit gave %v", enc, err)
		}
	}
	check("gzip", gz.Bytes())
	check("GZIP", gz.Bytes())
	check("deflate", zl.Bytes())
	check("deflate", raw.Bytes())
	for _, enc := range []string{"br", "zstd", "compress", ""} {
		if CanDecode([]byte(enc)) {
			t.Fatalf("CanDecode(%q) = true", enc)
		}
		if _, err := NewDecoder(strings.NewReader("x"), []byte(enc)); err == nil {
			t.Fatalf("NewDecoder(%q) accepted", enc)
		}
	}
}
