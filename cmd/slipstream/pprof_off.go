//go:build !pprof

package main

import (
	"errors"
	"io"
)

// servePprof is the stand-in of builds without the pprof tag (see pprof.go).
func servePprof(string, io.Writer) error {
	return errors.New("this slipstream was built without profiling; build it with -tags pprof (make build-pprof)")
}
