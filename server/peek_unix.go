//go:build linux || darwin || freebsd || netbsd || openbsd

package server

import "syscall"

// peerGone reports whether the peer of a socket has closed or reset it,
// without consuming anything: a peek that finds the end of the stream (or
// an error other than "nothing to read yet") means the client is gone.
// Pending bytes leave the question open: they may be a pipelined request,
// or, under TLS, the close_notify alert a client sends just before its
// FIN, which no peek can see past; there the socket's state answers
// (finReceived). A client that only half-closes is taken for gone either
// way, as the end of the stream says nothing else.
func peerGone(rc syscall.RawConn) bool {
	var buf [1]byte
	gone := false
	err := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err != nil:
			gone = true
		case n == 0:
			gone = true
		default:
			gone = finReceived(int(fd))
		}
		return true
	})
	return gone || err != nil
}
