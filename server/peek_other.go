//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package server

import "syscall"

// peerGone cannot peek on this platform: a departed client is noticed at
// its next failed write.
func peerGone(syscall.RawConn) bool { return false }
