//go:build !linux

package server

import "net"

// lowWater does nothing on this platform: a large body is read as the
// segments arrive.
type lowWater struct{ cur int }

func newLowWater(net.Conn) lowWater { return lowWater{cur: 1} }

func (w *lowWater) set(int) {}
