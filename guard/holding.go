package guard

// Holding reports whether r holds back bytes (a possible placeholder's
// start) that a later Feed or Flush emits.
func (r *Restorer) Holding() bool { return len(r.carry) > 0 }

// Holding reports whether sc holds back bytes (a possible secret's start)
// that a later Feed or Flush emits.
func (sc *Scanner) Holding() bool { return len(sc.buf) > sc.ctx }
