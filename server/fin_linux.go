package server

import "golang.org/x/sys/unix"

// tcpCloseWait is the state of a TCP socket whose peer has sent its FIN
// and which has not closed yet (include/net/tcp_states.h).
const tcpCloseWait = 8

// finReceived reports whether the peer of TCP socket fd has sent its FIN,
// whatever bytes it sent before that are still unread.
func finReceived(fd int) bool {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	return err == nil && info.State == tcpCloseWait
}
