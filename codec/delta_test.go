package codec

import "testing"

func TestAppendStrings(t *testing.T) {
	f := func(data string, want ...string) {
		t.Helper()
		ds := AppendStrings(nil, []byte(data))
		var got []string
		for _, d := range ds {
			got = append(got, data[d.Start:d.End]+"/"+string(rune('0'+d.Levels)))
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %q, want %q", data, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: got %q, want %q", data, got, want)
			}
		}
	}
	f(`{"a":"x","b":[1,"y",{"arguments":"{\"k\":\"v\"}"}],"partial_json":"p","n":null}`, "x/1", "y/1", `{\"k\":\"v\"}/2`, "p/2")
	f(`"top"`, "top/1")
	f(`[]`)
	f(`{"input":{"arguments":{"deep":"d"}}}`, "d/1")
	f(`[DONE]`) // Chat's last data is not JSON
	f(`{"a":[1,`)
}
