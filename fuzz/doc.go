// Package fuzz holds slipstream's cross-package fuzz targets: each drives
// the whole server over a real loopback socket, between a client of one
// dialect and stub upstreams of every dialect, and checks properties that
// no single package can: the process survives, a key's model allow-list
// is never bypassed (the upstream only ever receives a model the key may
// use), and every stream a client receives passes its dialect's grammar
// checker, every error is in its dialect's shape, no broken upstream
// answer reaches a client as a success, and no key reaches the log or a
// client.
//
// The targets are in the _test.go files (FuzzRequest: hostile request
// bytes; FuzzUpstream: hostile upstream answers and chunk boundaries).
// Their seeds, in testdata/fuzz/<Target>/ and in f.Add calls, run as
// ordinary tests in go test and make test. make fuzz runs every fuzz target
// of the repository, these and the single-package ones, for FUZZTIME each;
// go test writes an input that fails to testdata/fuzz/<Target>/ beside
// its target, where it becomes a seed: commit it with the fix.
package fuzz
