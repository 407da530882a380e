package chaos

import "syscall"

// smallReceiveBuffer shrinks a socket's receive buffer before it
// connects, so a peer writing to a client that does not read blocks
// after kilobytes, not megabytes.
func smallReceiveBuffer(network, address string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	}); cerr != nil {
		return cerr
	}
	return err
}
