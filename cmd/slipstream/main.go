// Command slipstream is the LLM API proxy.
//
//	slipstream [-config FILE] [-pprof ADDR]   serve
//	slipstream check [-config FILE]    validate a config, print every problem
//	slipstream version                 print the version
//	slipstream tokens [-encoding E] [-ids] [FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"slipstream/server"
	"slipstream/server/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			fmt.Fprintln(stdout, "slipstream", version)
			return 0
		case "check":
			return runCheck(args[1:], stdout, stderr)
		case "tokens":
			return runTokens(args[1:], stdin, stdout, stderr)
		}
	}
	return runServe(args, stderr)
}

// loadConfig reads -config, else ./slipstream.yaml when present, else the
// built-in default. It returns the source it used, for the start-up line.
func loadConfig(path string) (*config.Config, string, error) {
	if path == "" {
		if _, err := os.Stat("slipstream.yaml"); err == nil {
			path = "slipstream.yaml"
		}
	}
	if path == "" {
		return config.Default(os.LookupEnv), "built-in default", nil
	}
	c, err := config.LoadFile(path)
	return c, path, err
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (default ./slipstream.yaml, else the built-in default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	_, src, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n%v\n", src, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", src)
	return 0
}

func runServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("slipstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (default ./slipstream.yaml, else the built-in default)")
	pprofAddr := fs.String("pprof", "", "serve Go profiles on this address (e.g. 127.0.0.1:6060); off by default")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *pprofAddr != "" {
		if err := servePprof(*pprofAddr, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	cfg, src, err := loadConfig(*path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n%v\n", src, err)
		return 1
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(cfg.Limits.GCPercent)
	}
	s, err := server.New(cfg, server.Options{Log: stderr})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "cannot listen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "slipstream %s listening on http://%s (config: %s, %d providers)\n", version, ln.Addr(), src, len(cfg.Providers))
	return serveUntilSignal(s, ln, stderr)
}

// serveUntilSignal serves until SIGINT or SIGTERM, then stops accepting
// and lets in-flight requests and streams finish within the configured
// shutdown grace period.
func serveUntilSignal(s *server.Server, ln net.Listener, stderr io.Writer) int {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	case got := <-sig:
		fmt.Fprintf(stderr, "%s: draining in-flight requests\n", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Config().Timeouts.Shutdown.D())
	defer cancel()
	if err := s.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "shutdown: %v\n", err)
		return 1
	}
	if err := <-errc; err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
	}
	fmt.Fprintln(stderr, "stopped")
	return 0
}
