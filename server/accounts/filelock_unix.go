//go:build linux || darwin || freebsd || netbsd || openbsd

package accounts

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockTimeout bounds the wait for another process's write of the
// directory (a holder only reads and rewrites one small file).
const lockTimeout = 10 * time.Second

// lockFile takes an exclusive flock on the file at path (created 0600),
// waiting at most lockTimeout; the returned func releases it. flock
// conflicts between open files, so two Dirs of one process exclude each
// other like two processes do.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the accounts lock file: %w", err)
	}
	deadline := time.Now().Add(lockTimeout)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("cannot lock the accounts directory: %w", err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("cannot lock the accounts directory: another process holds it over %s", lockTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
