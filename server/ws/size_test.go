package ws

import (
	"reflect"
	"testing"
)

// TestConnSize: a connection's state fits the 4 KiB size class; a field
// that pushes it over costs every open connection 768 bytes more.
func TestConnSize(t *testing.T) {
	if n := reflect.TypeFor[conn]().Size(); n > 4096 {
		t.Fatalf("conn is %d bytes, over the 4096-byte size class", n)
	}
}
