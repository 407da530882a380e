//go:build linux || darwin || freebsd || netbsd || openbsd

package server

import "syscall"

// peerGone reports whether the peer of a socket has closed or reset it,
// without consuming anything: a peek that finds the end of the stream (or
// an error other than "nothing to read yet") means the client is gone;
// pending bytes (a pipelined request) mean it is still there. Under TLS a
// client that closes with a close_notify alert leaves that alert pending,
// so it is seen only at the next write; a reset or a bare close is seen.
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
		}
		return true
	})
	return gone || err != nil
}
