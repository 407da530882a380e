package tokenize

import (
	"errors"
	"strings"
	"testing"
)

func TestKnownCases(t *testing.T) {
	f := func(text string) {
		t.Helper()
		checkExact(t, O200k(), []byte(text))
		checkExact(t, Cl100k(), []byte(text))
	}
	f("")
	f("hello world")
	f("\t\n\t\nx")
	f("Hello, World! I'm here. WE'LL see; they'RE 'S 'sup")
	f("HelloWorld CamelCaseString XMLHttpRequest ABCdef")
	f("  leading and trailing  ")
	f("line1\r\nline2\n\n\n  indented\n\t\ttabs")
	f("12345 1234567 ١٢٣٤٥ ²³ Ⅻ")
	f("中文测试，日本語のテキスト、한국어 텍스트")
	f("नमस्ते दुनिया مرحبا بالعالم Привет мир")
	f("👨‍👩‍👧‍👦 🏳️‍🌈 e\u0301cole E\u0301COLE")
	f("a\u00a0b\u3000c \u00a0 \u3000\u3000d")
	f("<|endoftext|> <|fim_prefix|>")
	f(`{"key": "value", "n": [1, 2.5e10, null]}`)
	f("path/to/file.go // comment\n/* x */")
	f("\xff\xfe invalid \xc3 bytes \xed\xa0\x80")
	f(strings.Repeat("a", 1000))
	f(strings.Repeat(" ", 1000))
	f(strings.Repeat("ab", 500))
}

func TestGet(t *testing.T) {
	f := func(name string, want *Encoding) {
		t.Helper()
		e, err := Get(name)
		if want == nil {
			if !errors.Is(err, ErrUnknownEncoding) {
				t.Fatalf("Get(%q) error = %v, want ErrUnknownEncoding", name, err)
			}
			return
		}
		if err != nil || e != want || e.Name() != name {
			t.Fatalf("Get(%q) = %v, %v; want %s", name, e, err, want.Name())
		}
	}
	f("o200k_base", O200k())
	f("cl100k_base", Cl100k())
	f("p50k_base", nil)
	f("", nil)
}
