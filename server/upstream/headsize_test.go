package upstream

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// headServer answers every request with n bytes of response headers.
func headServer(t *testing.T, n int) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("p", n))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`)) //nolint:errcheck // the client reads it or not
	}))
	t.Cleanup(up.Close)
	return up.URL
}

// A provider's response head is read into the connection's read buffer,
// sized for events (MaxHead): one up to that size works, one over it fails
// as CauseHeadTooLarge, which says so, never as "unreachable".
func TestResponseHeadSize(t *testing.T) {
	o := Options{Connect: 2 * time.Second, FirstByte: 2 * time.Second}
	if err := call(t, o, headServer(t, MaxHead-512)); err != nil {
		t.Fatalf("a head of %d bytes: %v", MaxHead-512, err)
	}
	err := call(t, o, headServer(t, MaxHead+1))
	if got := Classify(err); got != CauseHeadTooLarge || got.Status() != 502 {
		t.Fatalf("a head over %d bytes: cause %v (%v), want head_too_large (502)", MaxHead, got, err)
	}
	if txt := CauseHeadTooLarge.Text(); !strings.Contains(txt, "4 KiB") {
		t.Fatalf("text %q does not give the limit", txt)
	}
}
