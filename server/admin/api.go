// Package admin serves slipstream's operator side: the JSON management API
// under /admin/api/, its live feed of changes (Server-Sent Events), and the
// web console under /console/, embedded in the binary. It reads and acts
// through a Backend the server root implements, and knows nothing else of
// the server. Nothing here runs on the request path except Hub.Active.
//
// Who may call it: a request carrying an admin token (Authorization:
// Bearer, compared in constant time); without any token configured, only
// when every listener is a loopback address. A client key is refused.
// Requests from another origin's page are refused and get no CORS answer.
package admin

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Config configures a Handler.
type Config struct {
	// Tokens are the admin tokens accepted. None: the API is served only
	// when Backend.Loopback says so.
	Tokens []Token
	// Backend is what the API reads and acts on. Required.
	Backend Backend
	// Hub is the live feed's hub, shared across reloads. Required.
	Hub *Hub
	// Log receives one line per action, naming the admin token. Default:
	// discard.
	Log *log.Logger
	// Heartbeat is the interval of the live feed's keep-alive comments.
	// Default 15s.
	Heartbeat time.Duration
}

// Handler serves /admin/api/ and /console/. Build it with New; it is
// immutable and safe for concurrent use.
type Handler struct {
	tokens    tokenSet
	anyToken  bool
	b         Backend
	hub       *Hub
	log       *log.Logger
	heartbeat time.Duration
}

// New returns the handler for c.
func New(c Config) *Handler {
	h := &Handler{tokens: newTokenSet(c.Tokens), anyToken: len(c.Tokens) > 0, b: c.Backend, hub: c.Hub, log: c.Log, heartbeat: c.Heartbeat}
	if h.log == nil {
		h.log = log.New(io.Discard, "", 0)
	}
	if h.heartbeat <= 0 {
		h.heartbeat = 15 * time.Second
	}
	return h
}

// Path prefixes the handler serves.
const (
	APIPrefix     = "/admin/api/"
	ConsolePrefix = "/console/"
)

// Owns reports whether path is the handler's: under /admin/ or /console.
// It allocates nothing.
func Owns(path []byte) bool {
	return bytes.HasPrefix(path, prefixAdmin) || string(path) == "/admin" || bytes.HasPrefix(path, prefixConsole)
}

var prefixAdmin, prefixConsole = []byte("/admin/"), []byte("/console")

// Serve answers a request whose path Owns. The caller has already checked
// the Host header (DNS rebinding); Serve checks the origin and the token.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx) {
	hd := &ctx.Response.Header
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	if !sameOrigin(ctx) {
		closeUnread(ctx)
		h.fail(ctx, fasthttp.StatusForbidden, "the management API and the console answer only their own pages: this request comes from another origin")
		return
	}
	path := string(ctx.Path())
	if !strings.HasPrefix(path, APIPrefix) {
		h.serveConsole(ctx, path)
		return
	}
	admin, ok := h.authorize(ctx)
	if !ok {
		closeUnread(ctx)
		return
	}
	h.route(ctx, admin, strings.TrimPrefix(path, APIPrefix))
}

// open reports whether the API may be served at all: with tokens, or on
// loopback listeners only.
func (h *Handler) open() bool { return h.anyToken || h.b.Loopback() }

// Admits reports whether this handler would authorise a live feed opened
// with the admin token whose SHA-256 is who (token), or with none: the
// hub asks it of every open feed when a reload installs the handler.
func (h *Handler) Admits(who [32]byte, token bool) bool {
	if token {
		return h.tokens.has(who)
	}
	return !h.anyToken && h.open()
}

const msgNoTokens = "the management API and the console are off: no admin tokens are configured and the server listens on a non-loopback address; add admin.tokens ({name, token}) to the configuration"

// authorize checks the request's admin token and returns the name it acts
// under; on refusal it has answered.
func (h *Handler) authorize(ctx *fasthttp.RequestCtx) (string, bool) {
	if !h.open() {
		h.fail(ctx, fasthttp.StatusForbidden, msgNoTokens)
		return "", false
	}
	presented := bearer(ctx)
	if name := h.tokens.find(presented); name != "" {
		return name, true
	}
	if len(presented) > 0 && h.b.IsClientKey(presented) {
		h.fail(ctx, fasthttp.StatusForbidden, "this is a client key: the management API takes an admin token (admin.tokens)")
		return "", false
	}
	if !h.anyToken {
		// No tokens configured, served on loopback only, and only to
		// requests that name it by a loopback address.
		if !loopbackHost(ctx.Request.Header.Host()) {
			h.fail(ctx, fasthttp.StatusForbidden, "without admin tokens the management API answers only requests addressed to 127.0.0.1, [::1] or localhost; add admin.tokens ({name, token}) to reach it by another name")
			return "", false
		}
		return "loopback", true
	}
	ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="slipstream admin"`)
	h.fail(ctx, fasthttp.StatusUnauthorized, "missing or invalid admin token: send Authorization: Bearer TOKEN with a token of admin.tokens")
	return "", false
}

// route dispatches an authorized API request; rest is the path after
// /admin/api/.
func (h *Handler) route(ctx *fasthttp.RequestCtx, admin, rest string) {
	m := string(ctx.Method())
	get, post := m == fasthttp.MethodGet || m == fasthttp.MethodHead, m == fasthttp.MethodPost
	switch {
	case rest == "status" && get:
		h.json(ctx, h.b.Status())
	case rest == "providers" && get:
		h.json(ctx, h.b.Providers())
	case rest == "keys" && get:
		h.json(ctx, h.b.Keys())
	case rest == "live" && get:
		h.json(ctx, h.b.Live())
	case rest == "usage" && get:
		h.usage(ctx)
	case rest == "requests" && get:
		h.requests(ctx)
	case rest == "events" && get:
		h.events(ctx)
	case rest == "credentials/end-cooldown" && post:
		h.credentialAction(ctx, admin, "end-cooldown")
	case rest == "credentials/disable" && post:
		h.credentialAction(ctx, admin, "disable")
	case rest == "credentials/enable" && post:
		h.credentialAction(ctx, admin, "enable")
	case rest == "reload" && post:
		h.reload(ctx, admin)
	case rest == "live/cancel" && post:
		h.cancel(ctx, admin)
	default:
		closeUnread(ctx)
		if allow := allowed(rest); allow != "" {
			ctx.Response.Header.Set("Allow", allow)
			h.fail(ctx, fasthttp.StatusMethodNotAllowed, "method "+m+" is not allowed here; allowed: "+allow)
			return
		}
		h.fail(ctx, fasthttp.StatusNotFound, "no management API route "+strconv.Quote(clip(rest)))
	}
}

// allowed is the Allow header of a known route, "" for none.
func allowed(rest string) string {
	switch rest {
	case "status", "providers", "keys", "live", "usage", "requests", "events":
		return "GET, HEAD"
	case "credentials/end-cooldown", "credentials/disable", "credentials/enable", "reload", "live/cancel":
		return "POST"
	}
	return ""
}

// credentialRef is the body of the credential actions.
type credentialRef struct {
	Provider   string `json:"provider"`
	Credential string `json:"credential"`
}

func (h *Handler) credentialAction(ctx *fasthttp.RequestCtx, admin, action string) {
	var ref credentialRef
	if !h.readJSON(ctx, &ref) {
		return
	}
	if ref.Provider == "" || ref.Credential == "" {
		h.fail(ctx, fasthttp.StatusBadRequest, `the body needs "provider" and "credential" (names)`)
		return
	}
	var err error
	switch action {
	case "end-cooldown":
		err = h.b.EndCooldown(ref.Provider, ref.Credential)
	case "disable":
		err = h.b.SetDisabled(ref.Provider, ref.Credential, true)
	default:
		err = h.b.SetDisabled(ref.Provider, ref.Credential, false)
	}
	target := ref.Provider + "/" + ref.Credential
	h.acted(ctx, admin, action, target, err)
}

func (h *Handler) reload(ctx *fasthttp.RequestCtx, admin string) {
	closeUnread(ctx) // no body
	h.acted(ctx, admin, "reload", "config", h.b.Reload())
}

// cancelRef is the body of POST live/cancel.
type cancelRef struct {
	ID string `json:"id"`
}

func (h *Handler) cancel(ctx *fasthttp.RequestCtx, admin string) {
	var ref cancelRef
	if !h.readJSON(ctx, &ref) {
		return
	}
	if ref.ID == "" {
		h.fail(ctx, fasthttp.StatusBadRequest, `the body needs "id", a live request's id`)
		return
	}
	h.acted(ctx, admin, "cancel", ref.ID, h.b.Cancel(ref.ID))
}

// actionResult is the answer to an action.
type actionResult struct {
	OK     bool   `json:"ok"`
	Action string `json:"action"`
	Target string `json:"target"`
}

// acted logs an action under the admin token's name (never the token),
// publishes it, and answers its result.
func (h *Handler) acted(ctx *fasthttp.RequestCtx, admin, action, target string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = err.Error()
	}
	h.log.Printf("admin action: admin=%q action=%s target=%q outcome=%q", admin, action, clip(target), clip(outcome))
	switch {
	case err == nil:
		h.hub.Publish(EventAction, map[string]string{"admin": admin, "action": action, "target": target})
		h.json(ctx, actionResult{OK: true, Action: action, Target: target})
	case errors.Is(err, ErrNotFound):
		h.fail(ctx, fasthttp.StatusNotFound, err.Error())
	case errors.Is(err, ErrUnavailable):
		h.fail(ctx, fasthttp.StatusConflict, err.Error())
	default:
		h.fail(ctx, fasthttp.StatusUnprocessableEntity, err.Error())
	}
}

// usage answers GET usage?by=&from=&to= from the ledger.
func (h *Handler) usage(ctx *fasthttp.RequestCtx) {
	l := h.b.Ledger()
	if l == nil {
		h.fail(ctx, fasthttp.StatusServiceUnavailable, msgNoLedger)
		return
	}
	q, err := usageQuery(ctx.QueryArgs(), time.Now())
	if err != nil {
		h.fail(ctx, fasthttp.StatusBadRequest, err.Error())
		return
	}
	rows, err := l.Usage(ctx, q)
	if err != nil {
		h.fail(ctx, fasthttp.StatusServiceUnavailable, "cannot read the usage ledger: "+clip(err.Error()))
		return
	}
	h.json(ctx, usageAnswer{By: q.By, From: q.From, To: q.To, Rows: nonNil(rows)})
}

const msgNoLedger = "usage ledger is not enabled: set usage.enabled in the configuration"

type usageAnswer struct {
	By   string     `json:"by"`
	From time.Time  `json:"from"`
	To   time.Time  `json:"to"`
	Rows []UsageRow `json:"rows"`
}

// usageQuery reads by (default day), from and to (RFC 3339 or
// YYYY-MM-DD; default the last 7 days up to now).
func usageQuery(args *fasthttp.Args, now time.Time) (UsageQuery, error) {
	q := UsageQuery{By: string(args.Peek("by")), To: now.UTC()}
	if q.By == "" {
		q.By = "day"
	}
	switch q.By {
	case "key", "model", "provider", "day":
	default:
		return q, fmt.Errorf("by must be key, model, provider or day (got %q)", clip(q.By))
	}
	q.From = q.To.AddDate(0, 0, -7)
	for _, p := range [...]struct {
		name string
		t    *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		v := string(args.Peek(p.name))
		if v == "" {
			continue
		}
		t, err := parseTime(v)
		if err != nil {
			return q, fmt.Errorf("cannot read %s: want RFC 3339 or YYYY-MM-DD from 1970 to 9999 (got %q)", p.name, clip(v))
		}
		*p.t = t
	}
	if !q.From.Before(q.To) {
		return q, errors.New("from must be before to")
	}
	return q, nil
}

// parseTime reads an RFC 3339 time or a date, in UTC, between 1970 and
// 9999: the ledger reads a zero time as an open end, and JSON carries no
// year outside 0-9999.
func parseTime(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, v); err != nil {
			return t, err
		}
	}
	t = t.UTC()
	if y := t.Year(); y < 1970 || y > 9999 {
		return t, errors.New("year out of range")
	}
	return t, nil
}

// requests answers GET requests?limit=N (default 50, at most 1000).
func (h *Handler) requests(ctx *fasthttp.RequestCtx) {
	l := h.b.Ledger()
	if l == nil {
		h.fail(ctx, fasthttp.StatusServiceUnavailable, msgNoLedger)
		return
	}
	limit := 50
	if v := ctx.QueryArgs().Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 1000 {
			h.fail(ctx, fasthttp.StatusBadRequest, "limit must be a number from 1 to 1000")
			return
		}
		limit = n
	}
	rows, err := l.Requests(ctx, limit)
	if err != nil {
		h.fail(ctx, fasthttp.StatusServiceUnavailable, "cannot read the usage ledger: "+clip(err.Error()))
		return
	}
	h.json(ctx, nonNil(rows))
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// events streams the live feed: an initial "hello" comment, then each
// published event, with a keep-alive comment every heartbeat. It ends when
// the client leaves (a failed write), when the subscriber lags too far
// (dropped), or when the hub closes.
func (h *Handler) events(ctx *fasthttp.RequestCtx) {
	var who [32]byte
	token := h.anyToken // then the request carried a valid token
	if token {
		who = sha256.Sum256(bearer(ctx))
	}
	sub := h.hub.subscribe(who, token)
	if sub == nil {
		h.fail(ctx, fasthttp.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	every, conn := h.heartbeat, ctx.Conn()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer h.hub.unsubscribe(sub)
		tick := time.NewTicker(every)
		defer tick.Stop()
		// The server's write timeout bounds a whole response from its
		// start; a feed lives on, so each write gets its own deadline.
		extend := func() { _ = conn.SetWriteDeadline(time.Now().Add(2*every + 10*time.Second)) }
		extend()
		if _, err := w.WriteString(": hello\n\n"); err != nil || w.Flush() != nil {
			return
		}
		for {
			select {
			case frame, ok := <-sub.ch:
				if !ok {
					return
				}
				extend()
				if _, err := w.Write(frame); err != nil {
					return
				}
			case <-tick.C:
				extend()
				if _, err := w.WriteString(": ping\n\n"); err != nil {
					return
				}
			}
			if w.Flush() != nil {
				return
			}
		}
	})
}

// maxActionBody bounds an action's JSON body.
const maxActionBody = 4 << 10

// readJSON reads the request's JSON body, at most maxActionBody bytes,
// into v. On failure it has answered.
func (h *Handler) readJSON(ctx *fasthttp.RequestCtx, v any) bool {
	ct := string(ctx.Request.Header.ContentType())
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		closeUnread(ctx)
		h.fail(ctx, fasthttp.StatusUnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
		return false
	}
	if n := ctx.Request.Header.ContentLength(); n > maxActionBody || n == -1 {
		closeUnread(ctx)
		h.fail(ctx, fasthttp.StatusRequestEntityTooLarge, "the body of an action is at most 4 KiB, with a Content-Length")
		return false
	}
	body, err := readBody(ctx)
	if err != nil {
		closeUnread(ctx)
		h.fail(ctx, fasthttp.StatusBadRequest, "cannot read the request body")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		h.fail(ctx, fasthttp.StatusBadRequest, "the body is not the JSON object this action takes: "+clip(err.Error()))
		return false
	}
	return true
}

// readBody reads a body of at most maxActionBody bytes, streamed or not.
func readBody(ctx *fasthttp.RequestCtx) ([]byte, error) {
	if r := ctx.RequestBodyStream(); r != nil {
		b, err := io.ReadAll(io.LimitReader(r, maxActionBody+1))
		if err == nil && len(b) > maxActionBody {
			err = errors.New("body too large")
		}
		return b, err
	}
	return ctx.Request.Body(), nil
}

// closeUnread makes the connection close after the answer: a body that
// was not read must not be taken for the next request.
func closeUnread(ctx *fasthttp.RequestCtx) { ctx.SetConnectionClose() }

// json answers 200 with v as JSON.
func (h *Handler) json(ctx *fasthttp.RequestCtx, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.fail(ctx, fasthttp.StatusInternalServerError, "cannot encode the answer")
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// errorAnswer is every refusal's body.
type errorAnswer struct {
	Error struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

// fail answers status with msg as {"error":{"status","message"}}.
func (h *Handler) fail(ctx *fasthttp.RequestCtx, status int, msg string) {
	var e errorAnswer
	e.Error.Status, e.Error.Message = status, msg
	b, _ := json.Marshal(&e) // a struct of a string and an int always marshals
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// clip bounds a client-chosen string quoted in an answer or a log line.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "..."
	}
	return s
}

// ClipName bounds a client-chosen name quoted in an error.
func ClipName(s string) string { return clip(s) }
