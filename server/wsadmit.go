package server

// wsAdmit reserves n bytes of a WebSocket frame's payload in the bytes in
// flight before the payload is read (ws.Options.Admit), under the rule
// admit applies to bodies: past limits.max_bytes_in_flight a frame is
// refused, unless nothing else is in flight (held is what earlier frames
// of the same message reserved), so that no frame is refused forever.
func (sh *shared) wsAdmit(n, held int64) bool {
	lim := sh.current.Load().cfg.Limits.MaxBytesInFlight
	if b := sh.bytesInFlight.Add(n); lim > 0 && b > lim.N() && b != n+held {
		sh.bytesInFlight.Add(-n)
		return false
	}
	return true
}

// wsLeave gives back bytes wsAdmit reserved.
func (sh *shared) wsLeave(n int64) { sh.bytesInFlight.Add(-n) }
