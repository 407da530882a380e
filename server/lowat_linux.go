package server

import (
	"net"
	"syscall"
)

// lowWater sets SO_RCVLOWAT on a client's TCP socket while a large body
// is read, so that the poller wakes the reader once most of the body has
// arrived rather than for every segment: a 1 MB body read from loopback
// took 16 reads and 7-8 waits, each a system call, with the default mark
// of one byte. Linux wakes a reader early anyway when the receive window
// is about to close, and grows the receive buffer to hold the mark
// (tcp_set_rcvlowat), so a mark never stalls a sender. While the reader
// waits, the body's bytes sit in the socket's buffer instead of the one
// readFull fills; the kernel bounds that memory (tcp_mem) and, under
// pressure, wakes the reader before the mark.
type lowWater struct {
	rc  syscall.RawConn
	cur int // the socket's mark now; 1 is the kernel's default
}

// newLowWater returns the mark of c's socket, or one whose methods do
// nothing when c is not a plain TCP socket: TLS reads ahead of what it
// returns by more than readFull's margin allows for.
func newLowWater(c net.Conn) lowWater {
	t, ok := c.(*net.TCPConn)
	if !ok {
		return lowWater{}
	}
	rc, err := t.SyscallConn()
	if err != nil {
		return lowWater{}
	}
	return lowWater{rc: rc, cur: 1}
}

// set makes the mark n bytes (at least 1). On a failure the mark stays
// where it was: only a socket that is closing refuses the option, and
// its reads end anyway.
func (w *lowWater) set(n int) {
	n = max(n, 1)
	if w.rc == nil || n == w.cur {
		return
	}
	var err error
	cerr := w.rc.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	})
	if cerr == nil && err == nil {
		w.cur = n
	}
}
