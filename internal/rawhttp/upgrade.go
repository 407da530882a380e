package rawhttp

import "strings"

// WebSocketKey is the Sec-WebSocket-Key every upgrade carries (RFC 6455's
// sample nonce).
const WebSocketKey = "dGhlIHNhbXBsZSBub25jZQ=="

// Upgrade returns a WebSocket upgrade request for path: the request line,
// the header pairs given (name, value, name, value...; Host among them
// when the request should have one), then Upgrade, Connection,
// Sec-WebSocket-Key and Sec-WebSocket-Version, and the blank line. An odd
// last name is ignored.
func Upgrade(path string, header ...string) string {
	var b strings.Builder
	b.WriteString("GET " + path + " HTTP/1.1\r\n")
	for i := 0; i+1 < len(header); i += 2 {
		b.WriteString(header[i] + ": " + header[i+1] + "\r\n")
	}
	b.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\n")
	b.WriteString("Sec-WebSocket-Key: " + WebSocketKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n")
	return b.String()
}
