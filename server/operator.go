package server

import (
	"sync/atomic"
	"time"

	"slipstream/server/admin"
	"slipstream/server/ledger"
	"slipstream/server/provider"
)

// operatorSide is what the operator's tools read and act on, shared by
// every generation of a Server: the live requests (live.go), the
// management API's feed, the credentials an operator turned off, the
// reload the API runs and its last result (adminbridge.go), and the usage
// ledger (ledger.go). The request path touches it only to register a
// request and to enqueue its record.
type operatorSide struct {
	live     liveSet
	hub      *admin.Hub
	switches *provider.Switches // credentials an operator turned off, across reloads
	reloadP  atomic.Pointer[reloadSource]
	lastRel  atomic.Pointer[admin.Reload]
	started  time.Time
	ledger   *ledger.Ledger // the usage ledger, nil when off
}
