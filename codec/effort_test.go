package codec

import "testing"

func TestEffortBudgets(t *testing.T) {
	f := func(b int64, want Effort) {
		t.Helper()
		if got := EffortForBudget(b); got != want {
			t.Fatalf("EffortForBudget(%d) = %s, want %s", b, got, want)
		}
	}
	f(-1, EffortUnset)
	f(0, EffortUnset)
	f(1024, EffortLow)
	f(BudgetLow, EffortLow)
	f(5119, EffortLow)
	f(5120, EffortMedium)
	f(BudgetMedium, EffortMedium)
	f(BudgetHigh, EffortHigh)
	f(BudgetXHigh, EffortXHigh)
	f(BudgetMax, EffortMax)
	f(1<<30, EffortMax)
	for e := EffortLow; e <= EffortMax; e++ {
		if EffortForBudget(BudgetForEffort(e)) != e {
			t.Fatalf("%s does not round-trip through its budget", e)
		}
	}
	if BudgetForEffort(EffortNone) != 0 || ParseEffort([]byte("xhigh")) != EffortXHigh || EffortMedium.String() != "medium" {
		t.Fatal("names or none")
	}
}
