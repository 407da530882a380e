package server

import (
	"reflect"
	"testing"
)

// TestExchangeSize: an exchange fits the 5376-byte size class. Every live
// request holds one; a field that pushes it over costs each 768 bytes
// more. Parts only some requests use (guardrails, the mock) are pointers
// made on first use.
func TestExchangeSize(t *testing.T) {
	if n := reflect.TypeFor[exchange]().Size(); n > 5376 {
		t.Fatalf("exchange is %d bytes, over the 5376-byte size class", n)
	}
}
