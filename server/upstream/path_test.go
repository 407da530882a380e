package upstream

import "testing"

func TestPathSegment(t *testing.T) {
	f := func(in string, valid bool, escaped string) {
		t.Helper()
		if got := ValidPathSegment([]byte(in)); got != valid {
			t.Fatalf("ValidPathSegment(%q) = %v", in, got)
		}
		if got := string(AppendPathSegment(nil, []byte(in))); got != escaped {
			t.Fatalf("AppendPathSegment(%q) = %q, want %q", in, got, escaped)
		}
	}
	f("gemini-2.5-pro", true, "gemini-2.5-pro")
	f("gemini-x?y=1#", false, "gemini-x%3Fy%3D1%23")
	f("gemini x", false, "gemini%20x")
	f("%2e%2e%2f", false, "%252e%252e%252f")
	f("../v1/files", false, "..%2Fv1%2Ffiles")
	f("a\r\nb", false, "a%0D%0Ab")
	f("a\\b", false, "a%5Cb")
	f("", false, "")
	f("x.y", true, "x.y")
	f("é", true, "%C3%A9")
}
