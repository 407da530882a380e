package bench

import (
	"slices"
	"testing"
)

// TestFastProxyTarget: fastproxy is selected like any target, and only
// once its binary was built; a failed build leaves its rows out instead
// of failing every workload that runs it.
func TestFastProxyTarget(t *testing.T) {
	e := &Env{Slipstream: "slipstream", Opts: Options{Targets: []string{"revproxy", "fastproxy", "slipstream"}}}
	if got := e.targets("revproxy", "fastproxy", "slipstream"); !slices.Equal(got, []string{"revproxy", "slipstream"}) {
		t.Fatalf("without a fastproxy binary: targets %v", got)
	}
	e.FastProxy = "fastproxy"
	if got := e.targets("revproxy", "fastproxy", "slipstream"); !slices.Equal(got, []string{"revproxy", "fastproxy", "slipstream"}) {
		t.Fatalf("with a fastproxy binary: targets %v", got)
	}
	e.Opts.Targets = []string{"slipstream"}
	if got := e.targets("fastproxy", "slipstream"); !slices.Equal(got, []string{"slipstream"}) {
		t.Fatalf("-targets slipstream: targets %v", got)
	}
}
