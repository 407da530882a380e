package server

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestHeadAdmits: only a head the handler will admit gets fasthttp's
// read-ahead; every head refused (or not judged) from the head alone
// gets one byte, so its refusal never waits for the body.
func TestHeadAdmits(t *testing.T) {
	cfg := strings.Replace(guardConfig, "max_body_bytes: 4096", "max_body_bytes: 4096\n  max_bytes_in_flight: 8192", 1)
	_, s := startServer(t, cfg, "http://127.0.0.1:1")
	const good = "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: good-key\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
	cases := []struct {
		name, head string
		want       int
	}{
		{"admitted", good, 4096},
		{"bearer key", strings.Replace(good, "x-api-key: good-key", "Authorization: Bearer good-key", 1), 4096},
		{"wrong key", strings.Replace(good, "good-key", "bad-key", 1), 1},
		{"key in the query", strings.Replace(strings.Replace(good, "x-api-key: good-key\r\n", "", 1), "/v1/messages", "/v1/messages?key=good-key", 1), 1},
		{"no route", strings.Replace(good, "/v1/messages", "/v1/nothing", 1), 1},
		{"not POST", strings.Replace(good, "POST", "PUT", 1), 1},
		{"gemini path", strings.Replace(good, "/v1/messages", "/v1beta/models/gemini-x:generateContent", 1), 1},
		{"text body", strings.Replace(good, "application/json", "text/plain", 1), 1},
		{"over max_body_bytes", strings.Replace(good, "Content-Length: 100", "Content-Length: 4097", 1), 1},
		{"chunked", strings.Replace(good, "Content-Length: 100", "Transfer-Encoding: chunked", 1), 1},
		{"foreign Host", strings.Replace(good, "Host: 127.0.0.1", "Host: evil.example", 1), 1},
		{"foreign Origin", strings.Replace(good, "\r\n\r\n", "\r\nOrigin: https://evil.example\r\n\r\n", 1), 1},
	}
	for _, c := range cases {
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(c.head))); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := s.shared.readAhead(&h).MaxRequestBodySize; got != c.want {
			t.Errorf("%s: read-ahead %d, want %d", c.name, got, c.want)
		}
	}
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(good))); err != nil {
		t.Fatal(err)
	}
	s.bytesInFlight.Add(8150) // an upload in flight leaves no room for 100 more bytes
	defer s.bytesInFlight.Add(-8150)
	if got := s.shared.readAhead(&h).MaxRequestBodySize; got != 1 {
		t.Errorf("no room in max_bytes_in_flight: read-ahead %d, want 1", got)
	}
}
