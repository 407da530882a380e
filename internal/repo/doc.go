// Package repo holds tests of the repository as a whole: the container
// build, the systemd unit, and that docs and comments point only inside
// the repository or at providers' public documentation. It has no code.
package repo
