//go:build tools

// Package tools pins modules that are used only by tests and generators, so
// that `go mod tidy` keeps them.
package tools

import (
	_ "github.com/pkoukk/tiktoken-go"
	_ "github.com/pkoukk/tiktoken-go-loader"
)
