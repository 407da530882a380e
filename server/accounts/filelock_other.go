//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package accounts

// lockFile is a no-op where flock is missing: there, processes sharing an
// account directory may write a file over each other's change.
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
