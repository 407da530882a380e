package metrics

import "testing"

func TestAppendExposition(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(appendExposition(nil, []byte(in))); got != want {
			t.Fatalf("appendExposition(%q):\n got %q\nwant %q", in, got, want)
		}
	}
	// Metadata from the library gets help text; a repeat is dropped.
	f("# HELP slipstream_provider_credentials\n# TYPE slipstream_provider_credentials gauge\nslipstream_provider_credentials{provider=\"a\"} 1\n"+
		"# HELP slipstream_provider_credentials\n# TYPE slipstream_provider_credentials gauge\nslipstream_provider_credentials{provider=\"b\"} 2\n",
		"# HELP slipstream_provider_credentials Credentials configured, by provider.\n# TYPE slipstream_provider_credentials gauge\n"+
			"slipstream_provider_credentials{provider=\"a\"} 1\nslipstream_provider_credentials{provider=\"b\"} 2\n")
	// Lines without metadata get it, typed by the table or the name.
	f("slipstream_account_cooling{account=\"a\"} 0\nx_total 3\ny 4\n",
		"# HELP slipstream_account_cooling 1 while a subscription account rests, else 0.\n# TYPE slipstream_account_cooling gauge\nslipstream_account_cooling{account=\"a\"} 0\n"+
			"# HELP x_total\n# TYPE x_total counter\nx_total 3\n# HELP y\n# TYPE y gauge\ny 4\n")
	// A histogram's samples stay in its family; a counter gets _total;
	// the library's own help text stays.
	f("# HELP h\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n# HELP go_cgo_calls_count Calls.\n# TYPE go_cgo_calls_count counter\ngo_cgo_calls_count 5\n",
		"# HELP h\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n# HELP go_cgo_calls_count_total Calls.\n# TYPE go_cgo_calls_count_total counter\ngo_cgo_calls_count_total 5\n")
}
