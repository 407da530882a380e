//go:build darwin || freebsd || netbsd || openbsd

package server

// finReceived cannot read a socket's TCP state here: a FIN behind unread
// bytes (a TLS close_notify) is noticed at the next failed write.
func finReceived(int) bool { return false }
