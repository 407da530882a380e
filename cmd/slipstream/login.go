package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"slipstream/server"
	"slipstream/server/accounts"
	"slipstream/server/config"
)

// login: sign in with a subscription account (or import a CLI's own
// login) and store it under accounts_dir.

func loginFlags(fs *flag.FlagSet) {
	configFlag(fs)
	fs.String("name", "", "store the account as `NAME` (default: TYPE-EMAIL)")
	fs.Bool("no-browser", false, "do not open a browser: print the URL and wait for the redirect or the pasted redirect URL")
	fs.Bool("device", false, "codex: sign in with a device code instead of a browser redirect")
	accountsDirFlag(fs)
	fs.String("authorize-url", "", "override the provider's authorization `URL`")
	fs.String("token-url", "", "override the provider's token `URL`")
	fs.String("redirect-uri", "", "override the loopback redirect `URI` the provider sends the browser to")
	fs.String("device-url", "", "override the device user-code `URL` (codex)")
	fs.String("device-token-url", "", "override the device token `URL` (codex)")
	fs.String("device-verify-url", "", "override the device verification page `URL` shown to the user (codex)")
	fs.String("profile-url", "", "override Claude's OAuth profile `URL` (the account's email)")
	fs.String("userinfo-url", "", "override Google's userinfo `URL` (the account's email)")
	fs.String("code-assist-url", "", "override the Code Assist base `URL` (gemini, antigravity: project discovery)")
}

func accountsDirFlag(fs *flag.FlagSet) {
	fs.String("accounts-dir", "", "account files in `DIR` (default: the config's accounts_dir, else "+config.DefaultAccountsDir+")")
}

var loginTypes = []string{accounts.TypeClaude, accounts.TypeCodex, accounts.TypeGemini, accounts.TypeAntigravity}

// runLogin runs `slipstream login TYPE` or `slipstream login import TYPE
// [FILE]`; flags may also follow TYPE.
func runLogin(fs *flag.FlagSet, stdin io.Reader, stdout, stderr io.Writer) int {
	args := fs.Args()
	pos := []string{}
	for len(args) > 0 {
		if strings.HasPrefix(args[0], "-") {
			if err := fs.Parse(args); err != nil {
				fmt.Fprintf(stderr, "slipstream login: %v\n", err)
				return 2
			}
			args = fs.Args()
			continue
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	str := func(n string) string { return fs.Lookup(n).Value.String() }
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "slipstream login: %s\nusage: slipstream login claude|codex|gemini|antigravity [-name N] [-no-browser] [-device]\n       slipstream login import claude|codex [FILE]\n", msg)
		return 2
	}
	if len(pos) == 0 {
		return usageErr("name the account type")
	}
	cfg, dir, err := accountsConfig(str("config"), str("accounts-dir"))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if pos[0] == "import" {
		if len(pos) < 2 || len(pos) > 3 || (pos[1] != accounts.TypeClaude && pos[1] != accounts.TypeCodex) {
			return usageErr("import takes claude or codex, and optionally the file")
		}
		file := accounts.CLIFile(pos[1])
		if len(pos) == 3 {
			file = pos[2]
		}
		return runImport(dir, pos[1], file, str("name"), stdout, stderr)
	}
	typ := pos[0]
	if len(pos) > 1 || !contains(loginTypes, typ) {
		return usageErr(fmt.Sprintf("unknown account type %q", strings.Join(pos, " ")))
	}
	f := server.Flows(cfg)[typ]
	f.Override(accounts.Endpoints{Authorize: str("authorize-url"), Token: str("token-url"), Redirect: str("redirect-uri"),
		DeviceCode: str("device-url"), DeviceToken: str("device-token-url"), DeviceVerify: str("device-verify-url"),
		Profile: str("profile-url"), Userinfo: str("userinfo-url"), CodeAssist: str("code-assist-url")})
	if f.ClientID == "" {
		fmt.Fprintf(stderr, "slipstream login %s: no OAuth client id: set accounts.oauth.%s.client_id and client_secret (the %s CLI's installed-app client) or SLIPSTREAM_%s_CLIENT_ID/_SECRET\n", typ, typ, typ, strings.ToUpper(typ))
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var a *accounts.Account
	if str("device") == "true" {
		a, err = deviceLogin(ctx, f, str("name"), stdout)
	} else {
		a, err = codeLogin(ctx, f, str("name"), str("no-browser") == "true", stdin, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "slipstream login %s: %v\n", typ, err)
		return 1
	}
	if err := accounts.NewDir(dir).Save(a); err != nil {
		fmt.Fprintf(stderr, "slipstream login %s: %v\n", typ, err)
		return 1
	}
	fmt.Fprintf(stdout, "signed in: %s account %s (%s) saved in %s\n", a.Type, a.Name, describe(a), dir)
	return 0
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// accountsConfig loads the config (for accounts_dir and OAuth
// overrides); dirFlag overrides the directory.
func accountsConfig(path, dirFlag string) (*config.Config, string, error) {
	cfg, src, err := loadConfig(path, "")
	if err != nil {
		return nil, "", fmt.Errorf("%s: invalid configuration:\n%v", src, err)
	}
	dir := cfg.AccountsDir
	if dirFlag != "" {
		dir = dirFlag
	}
	return cfg, accounts.ExpandHome(dir), nil
}

func describe(a *accounts.Account) string {
	var parts []string
	if a.Email != "" {
		parts = append(parts, a.Email)
	}
	if a.Plan != "" {
		parts = append(parts, "plan "+a.Plan)
	}
	if !a.Expiry.IsZero() {
		parts = append(parts, "token valid until "+a.Expiry.UTC().Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return "no profile details"
	}
	return strings.Join(parts, ", ")
}

// codeLogin runs the authorization-code flow: the loopback redirect when
// its port can be bound, and at the same time the pasted redirect URL
// from stdin (a headless host: the browser elsewhere lands on a dead
// loopback page whose address the user pastes).
func codeLogin(ctx context.Context, f *accounts.Flow, name string, noBrowser bool, stdin io.Reader, stdout, stderr io.Writer) (*accounts.Account, error) {
	l := accounts.NewLogin(f, nil)
	u := l.AuthorizeURL()
	fmt.Fprintf(stdout, "Open this URL in a browser and sign in:\n\n%s\n\n", u)
	codes := make(chan string, 2)
	if ln, err := l.ListenRedirect(); err == nil {
		go func() {
			if c, err := l.Callback(ctx, ln); err == nil {
				codes <- c
			}
		}()
		fmt.Fprintf(stdout, "Waiting for the redirect to %s ...\n", f.RedirectURI)
	} else {
		fmt.Fprintf(stdout, "(cannot listen for the redirect on %s: %v)\n", f.RedirectURI, err)
	}
	fmt.Fprintln(stdout, "Or paste the address the browser was redirected to (or the code shown) and press Enter:")
	go readPasted(l, stdin, codes, stderr)
	if !noBrowser {
		openBrowser(u)
	}
	select {
	case c := <-codes:
		return l.Finish(ctx, name, c, time.Now())
	case <-ctx.Done():
		return nil, fmt.Errorf("no sign-in within the time allowed")
	}
}

func readPasted(l *accounts.Login, stdin io.Reader, codes chan<- string, stderr io.Writer) {
	if stdin == nil {
		return
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		c, err := l.ParseRedirect(line)
		if err != nil {
			fmt.Fprintf(stderr, "%v; paste again:\n", err)
			continue
		}
		codes <- c
		return
	}
}

// openBrowser tries the desktop's URL opener; failure is fine (the URL
// is printed).
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

func deviceLogin(ctx context.Context, f *accounts.Flow, name string, stdout io.Writer) (*accounts.Account, error) {
	d, err := accounts.StartDevice(ctx, f, httpClient())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "Open %s and enter the code %s\nWaiting for the sign-in (15 min at most) ...\n", d.VerifyURL, d.UserCode)
	return accounts.PollDevice(ctx, f, httpClient(), d, name, time.Now)
}

func runImport(dir, typ, file, name string, stdout, stderr io.Writer) int {
	a, err := accounts.Import(typ, file, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "slipstream login import: %v\n", err)
		return 1
	}
	a.Name = name
	if a.Name == "" {
		a.Name = accounts.DefaultName(a)
	}
	if !accounts.ValidName(a.Name) {
		fmt.Fprintf(stderr, "slipstream login import: invalid -name (letters, digits and . _ @ + - only)\n")
		return 2
	}
	if err := accounts.NewDir(dir).Save(a); err != nil {
		fmt.Fprintf(stderr, "slipstream login import: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "imported %s's login as %s account %s (%s) into %s\n", file, a.Type, a.Name, describe(a), dir)
	fmt.Fprintf(stdout, "note: the %s CLI and slipstream now hold the same single-use refresh token; whichever refreshes second is logged out. Prefer `slipstream login %s` for an account slipstream keeps alone.\n", typ, typ)
	return 0
}
