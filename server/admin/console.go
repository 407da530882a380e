package admin

import (
	"embed"
	"strings"

	"github.com/valyala/fasthttp"
)

// consoleFiles are the console's pages, embedded in the binary: no build
// step, no framework, nothing fetched from elsewhere.
//
//go:embed console
var consoleFiles embed.FS

// consoleCSP allows the console's own script, style and API calls and
// nothing else: no inline script or style, no other origin, no framing.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// consoleTypes are the content types of the console's files.
var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// serveConsole serves the console's static files. They hold no data (the
// page asks for the admin token and reads the API with it), but they are
// served only where the API is: with admin tokens, or on loopback.
func (h *Handler) serveConsole(ctx *fasthttp.RequestCtx, path string) {
	closeUnread(ctx)
	if !h.open() {
		h.fail(ctx, fasthttp.StatusForbidden, msgNoTokens)
		return
	}
	if m := string(ctx.Method()); m != fasthttp.MethodGet && m != fasthttp.MethodHead {
		ctx.Response.Header.Set("Allow", "GET, HEAD")
		h.fail(ctx, fasthttp.StatusMethodNotAllowed, "the console's pages are read with GET")
		return
	}
	if path == "/console" || path == "/admin" || path == "/admin/" {
		ctx.Redirect(ConsolePrefix, fasthttp.StatusFound)
		return
	}
	name := strings.TrimPrefix(path, ConsolePrefix)
	if name == "" {
		name = "index.html"
	}
	i := strings.LastIndexByte(name, '.')
	typ, ok := "", false
	if i > 0 && !strings.Contains(name, "/") {
		typ, ok = consoleTypes[name[i:]]
	}
	var b []byte
	var err error
	if ok {
		b, err = consoleFiles.ReadFile("console/" + name)
	}
	if !ok || err != nil {
		h.fail(ctx, fasthttp.StatusNotFound, "no console page "+clip(name))
		return
	}
	ctx.Response.Header.Set("Content-Security-Policy", consoleCSP)
	ctx.SetContentType(typ)
	ctx.SetBody(b)
}
