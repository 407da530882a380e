//go:build !race

package server

// raceBuild is true in -race builds, which check ownership strictly.
const raceBuild = false
