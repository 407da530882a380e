package server

import (
	"runtime/debug"
	"sync/atomic"
)

// Ownership of an exchange is checked, not only documented. Each lease
// from the pool has a generation, odd while leased and even while pooled:
// acquireExchange starts one, release ends it. Every owner captures the
// generation when it takes x, and checks it when it gives x up:
//
//   - the handler, from acquireExchange until it releases x or hands it off;
//   - a body stream (streamBody, passBody), from the moment fasthttp runs
//     it until its end releases x;
//   - a hijacked connection's stream (serveHijacked, serveAfterPings),
//     from the moment fasthttp hands the connection over until its end
//     releases x.
//
// A release with a generation that is not the live one (a second release,
// or a late one after x went back to the pool and was leased to another
// request) is refused before it touches x: the other request's buffers
// stay its own.

// lease starts a new generation of x, taken from the pool.
func (x *exchange) lease() {
	if x.gen&1 != 0 {
		panic("BUG: a leased exchange was in the pool")
	}
	x.gen++
}

// owner is the generation an owner captures when it takes x.
func (x *exchange) owner() uint32 { return x.gen }

// owns reports whether gen is x's live lease.
func (x *exchange) owns(gen uint32) bool { return gen&1 != 0 && gen == x.gen }

// endLease ends the lease gen, or panics when gen is not the live lease.
func (x *exchange) endLease(gen uint32) {
	if !x.owns(gen) {
		panic(errStaleOwner)
	}
	x.gen++
}

// staleOwner is the panic value of an owner whose lease has ended.
type staleOwner struct{}

func (staleOwner) Error() string {
	return "BUG: an exchange released by an owner whose lease had ended"
}

var errStaleOwner error = staleOwner{}

// strictOwnership makes a broken ownership invariant panic where it is
// found, in tests and -race builds; production counts it (staleReleases,
// doubleReleases) and logs it, and keeps serving.
// Tests turn it on with CheckOwnershipStrictly: importing testing here
// would link the testing package, and its init, into the binary.
var strictOwnership = raceBuild

// CheckOwnershipStrictly makes a broken ownership invariant panic where it
// is found, for tests that drive a server (call it from the test's init).
func CheckOwnershipStrictly() { strictOwnership = true }

// releaseOnce is release for the owners that run outside the handler's
// call (body streams) and for the handler itself: a broken invariant there
// is counted in doubleReleases and logged, and panics again only under
// strictOwnership.
func (x *exchange) releaseOnce(gen uint32) {
	s := x.s
	defer func() {
		if p := recover(); p != nil {
			doubleReleases.Add(1)
			if strictOwnership {
				panic(p)
			}
			if s != nil {
				s.log.Printf("BUG: panic while releasing an exchange: %v\n%s", p, debug.Stack())
			}
		}
	}()
	x.release(gen)
}

// doubleReleases counts exchanges released twice or by a stale owner
// (each a bug). Tests assert it stays zero.
var doubleReleases atomic.Int64
