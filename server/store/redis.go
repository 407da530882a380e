package store

import "time"

// remote shares the store's state through Redis.
type remote struct{}

func (r *remote) up() bool { return false }
func (r *remote) close()   {}
func (r *remote) take(w *Window, now time.Time, n, limit int64) (bool, time.Duration, error) {
	return false, 0, errDown
}
func (r *remote) addWindow(w *Window, now time.Time, n int64)         {}
func (r *remote) addBudget(b *Budget, now time.Time, n int64)         {}
func (r *remote) addUsage(u *Usage, counts [5]int64)                  {}
func (r *remote) publishCooldown(cred, model string, until time.Time) {}

var errDown = errorString("redis is unreachable")

type errorString string

func (e errorString) Error() string { return string(e) }
