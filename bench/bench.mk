# bench/bench.mk: benchmark targets (docs/BENCHMARKS.md), included by the top Makefile.
#
# make bench  every workload once with short durations (about 5 minutes);
#             writes bench/out/report.md and bench/out/report.json and
#             exits non-zero on any failed request or gate.
# make soak   the fieldmix workload for 10 minutes (resting-floor and peak
#             RSS gates).

BENCH_OUT ?= bench/out
BENCH_FLAGS ?=

.PHONY: bench soak

bench:
	go run ./cmd/slipstream-bench -out $(BENCH_OUT) $(BENCH_FLAGS)

soak:
	go run ./cmd/slipstream-bench -out $(BENCH_OUT)/soak -workload fieldmix -duration 10m $(BENCH_FLAGS)
