// Command slipstream is the LLM API proxy.
//
//	slipstream [serve] [-config FILE] [-listen ADDR] [-pprof ADDR]
//	slipstream check [-config FILE] [-print]
//	slipstream health [-config FILE] [-insecure] [URL]
//	slipstream tokens [-encoding E] [-ids] [FILE]
//	slipstream usage [-config FILE] [-by key|model|provider|day] [-from DATE] [-to DATE] [-format table|csv|json]
//	slipstream version
//	slipstream help [COMMAND]
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
	"strings"
	"syscall"

	"slipstream/server"
	"slipstream/server/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// command is one subcommand: its flags (for parsing and for help) and what
// it does with the remaining arguments.
type command struct {
	name, args, doc string
	flags           func(fs *flag.FlagSet) // defines the flags; nil: none
	maxArgs         int                    // positional arguments allowed
}

var commands = []command{
	{name: "serve", args: "", doc: "serve the configuration (the default when no command is given)", flags: serveFlags},
	{name: "check", args: "", doc: "validate the configuration, print every problem with its line; -print shows the effective configuration", flags: checkFlags},
	{name: "health", args: "[URL]", doc: "GET URL (default /readyz of the configuration's listener, over https when it configures tls, trusting its cert_file); exit 0 when it answers 200 (for container health checks); an http URL a TLS-only listener refuses is asked over https", flags: healthFlags, maxArgs: 1},
	{name: "tokens", args: "[FILE]", doc: "count the tokens of FILE or stdin", flags: tokensFlags, maxArgs: 1},
	{name: "login", args: "claude|codex|gemini|antigravity | import claude|codex [FILE]", doc: "sign in with a subscription account (browser or pasted redirect; codex also -device) and store it under accounts_dir; import takes the CLI's own stored login", flags: loginFlags, maxArgs: 16},
	{name: "usage", doc: "print totals from the usage ledger (requests, errors, tokens, cost) by key, model, provider or day", flags: usageFlags},
	{name: "accounts", doc: "list the stored subscription accounts with their state (never a token)", flags: accountsFlags},
	{name: "version", doc: "print the version"},
	{name: "help", args: "[COMMAND]", doc: "print this help, or one command's", maxArgs: 1},
}

func serveFlags(fs *flag.FlagSet) {
	configFlag(fs)
	fs.String("listen", "", "listen on `ADDR` (host:port), overriding the config's listen; also $SLIPSTREAM_LISTEN")
	fs.String("pprof", "", "serve Go profiles on `ADDR` (e.g. 127.0.0.1:6060); builds with -tags pprof only")
}

func checkFlags(fs *flag.FlagSet) {
	configFlag(fs)
	fs.Bool("print", false, "print the effective configuration (defaults filled in, ${ENV} expanded, secrets redacted) as YAML")
}

func healthFlags(fs *flag.FlagSet) {
	configFlag(fs)
	fs.Bool("insecure", false, "do not verify the server's TLS certificate (a self-signed one on loopback)")
}

func tokensFlags(fs *flag.FlagSet) {
	fs.String("encoding", "o200k_base", "`ENCODING`: o200k_base or cl100k_base")
	fs.Bool("ids", false, "print the token ids, one per line, instead of the count")
}

func configFlag(fs *flag.FlagSet) {
	fs.String("config", "", "read the config from `FILE` (default ./slipstream.yaml, else the built-in default)")
}

func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// usage writes the help: every command with its flags.
func usage(w io.Writer) {
	fmt.Fprintf(w, "slipstream %s: an LLM API proxy for coding agents\n\nusage: slipstream [command] [flags] [args]\n\ncommands:\n", version)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(c.name+" "+synopsis(c)))
		fmt.Fprintf(w, "      %s\n", c.doc)
		writeFlags(w, c, "      ")
	}
	fmt.Fprintln(w, "\n"+environment+"\n\nslipstream help COMMAND (or slipstream COMMAND -h) prints one command's help.")
}

// environment is the help's paragraph on environment variables.
const environment = "environment: SLIPSTREAM_LISTEN overrides listen; ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY feed the built-in default config; GOMEMLIMIT bounds memory (and sets the default limits.max_bytes_in_flight)."

// commandUsage writes one command's help: its synopsis, what it does and
// its flags.
func commandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: slipstream %s\n\n%s\n", strings.TrimSpace(c.name+" "+synopsis(*c)), c.doc)
	if c.flags != nil {
		fmt.Fprintln(w, "\nflags:")
		writeFlags(w, *c, "  ")
	}
	if c.name == "serve" {
		fmt.Fprintln(w, "\n"+environment)
	}
}

// writeFlags lists c's flags, each line indented by indent.
func writeFlags(w io.Writer, c command, indent string) {
	if c.flags == nil {
		return
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		name, u := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "%s%s\n%s    %s", indent, strings.TrimSpace("-"+f.Name+" "+name), indent, u)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func synopsis(c command) string {
	var b strings.Builder
	if c.flags != nil {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			name, _ := flag.UnquoteUsage(f)
			fmt.Fprintf(&b, "[-%s] ", strings.TrimSpace(f.Name+" "+name))
		})
	}
	b.WriteString(c.args)
	return strings.TrimSpace(b.String())
}

// usageLine is the one line printed with a usage error.
func usageLine(c *command) string {
	return "usage: slipstream " + strings.TrimSpace(c.name+" "+synopsis(*c)) + "  (slipstream help for more)"
}

// parse parses args for c. It returns the flag set and -1, or an exit code
// when the command ends here (help asked: 0; bad usage: 2).
// A command asked for help (-h) prints its own help; with no command
// named (explicit is false), the whole help.
func parse(c *command, explicit bool, args []string, stdout, stderr io.Writer) (*flag.FlagSet, int) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.flags != nil {
		c.flags(fs)
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp) && (!explicit || c.name == "help"):
		usage(stdout)
		return nil, 0
	case errors.Is(err, flag.ErrHelp):
		commandUsage(stdout, c)
		return nil, 0
	case err != nil:
		fmt.Fprintf(stderr, "slipstream %s: %v\n%s\n", c.name, err, usageLine(c))
		return nil, 2
	case fs.NArg() > c.maxArgs:
		fmt.Fprintf(stderr, "slipstream %s: unexpected argument %q\n%s\n", c.name, fs.Arg(c.maxArgs), usageLine(c))
		return nil, 2
	}
	return fs, -1
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name, explicit := "serve", false
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args, explicit = args[0], args[1:], true
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "slipstream: unknown command %q\n%s\n", name, commandsLine())
		return 2
	}
	fs, code := parse(c, explicit, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	str := func(n string) string { return fs.Lookup(n).Value.String() }
	switch name {
	case "version":
		fmt.Fprintln(stdout, "slipstream", version)
		return 0
	case "help":
		return runHelp(fs.Arg(0), stdout, stderr)
	case "check":
		return runCheck(str("config"), str("print") == "true", stdout, stderr)
	case "tokens":
		return runTokens(str("encoding"), str("ids") == "true", fs.Arg(0), stdin, stdout, stderr)
	case "health":
		return runHealth(fs.Arg(0), str("config"), str("insecure") == "true", stdout, stderr)
	case "login":
		return runLogin(fs, stdin, stdout, stderr)
	case "accounts":
		return runAccounts(str("config"), str("accounts-dir"), stdout, stderr)
	case "usage":
		return runUsage(fs, stdout, stderr)
	}
	return runServe(str("config"), str("listen"), str("pprof"), stderr)
}

// runHelp prints the whole help, or the help of the command named.
func runHelp(name string, stdout, stderr io.Writer) int {
	if name == "" {
		usage(stdout)
		return 0
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "slipstream help: unknown command %q\n%s\n", name, commandsLine())
		return 2
	}
	commandUsage(stdout, c)
	return 0
}

// commandsLine is the usage line naming every command.
func commandsLine() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return "usage: slipstream [" + strings.Join(names, "|") + "] [flags]  (slipstream help for more)"
}

// loadConfig reads path, else ./slipstream.yaml when present, else the
// built-in default, with the listen override (the -listen flag, else
// $SLIPSTREAM_LISTEN). It returns the source it used, for messages.
func loadConfig(path, listen string) (*config.Config, string, error) {
	if listen == "" {
		listen = os.Getenv("SLIPSTREAM_LISTEN")
	}
	o := config.Override{Listen: listen}
	if path == "" {
		if _, err := os.Stat("slipstream.yaml"); err == nil {
			path = "slipstream.yaml"
		}
	}
	if path == "" {
		c, err := config.DefaultOverride(os.LookupEnv, o)
		return c, builtinDefault, err
	}
	c, err := config.LoadFile(path, o)
	return c, path, err
}

func runCheck(path string, print bool, stdout, stderr io.Writer) int {
	cfg, src, err := loadConfig(path, "")
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n%v\n", src, err)
		return 1
	}
	if print {
		out, err := cfg.MarshalRedacted()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "# effective configuration from %s (secrets redacted)\n%s", src, out)
		return 0
	}
	for _, w := range warnings(cfg) {
		fmt.Fprintf(stdout, "%s: warning: %s\n", src, w)
	}
	fmt.Fprintf(stdout, "%s: ok\n", src)
	return 0
}

func runServe(path, listen, pprofAddr string, stderr io.Writer) int {
	if pprofAddr != "" {
		if err := servePprof(pprofAddr, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	cfg, src, err := loadConfig(path, listen)
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n%v\n", src, err)
		return 1
	}
	if cfg.Log.Format == "json" {
		stderr = server.JSONLines(stderr)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(cfg.Limits.GCPercent)
	}
	s, err := server.New(cfg, server.Options{Log: stderr, Version: version, DefaultLedger: ledgerPlace(cfg, stderr)})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "cannot listen: %v\n", err)
		return 1
	}
	scheme := "http"
	if cfg.TLS.Enabled() {
		ln, err = tlsListener(ln, cfg.TLS, stderr)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		scheme = "https"
	}
	writeSummary(stderr, cfg, src)
	fmt.Fprintf(stderr, "slipstream %s listening on %s://%s\n", version, scheme, ln.Addr())
	// Start-up's garbage (the config's parse, the tables built from it,
	// the package initialisers') goes back to the kernel now rather than
	// through the background scavenger minutes later.
	debug.FreeOSMemory()
	load := func() (*config.Config, error) {
		c, _, err := loadConfig(path, listen)
		return c, err
	}
	stop := make(chan struct{})
	defer close(stop)
	if src != builtinDefault {
		if err := s.WatchConfig(src, load, stop); err != nil {
			fmt.Fprintf(stderr, "warning: %v; reload with SIGHUP\n", err)
		}
	}
	return serveUntilSignal(s, ln, stderr, func() { _ = s.ReloadWith(src+" (SIGHUP)", load) })
}

// builtinDefault names the configuration used when no file is found.
const builtinDefault = "built-in default"

// serveUntilSignal serves until SIGINT or SIGTERM, then stops accepting
// and lets in-flight requests and streams finish within the configured
// shutdown grace period. SIGHUP runs reload and keeps serving.
func serveUntilSignal(s *server.Server, ln net.Listener, stderr io.Writer, reload func()) int {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
wait:
	for {
		select {
		case err := <-errc:
			fmt.Fprintf(stderr, "serve: %v\n", err)
			return 1
		case got := <-sig:
			if got == syscall.SIGHUP {
				reload()
				continue
			}
			fmt.Fprintf(stderr, "%s: draining in-flight requests\n", got)
			break wait
		}
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
