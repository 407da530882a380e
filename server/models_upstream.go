package server

import (
	"log"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/pool"
	"slipstream/server/config"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// Model list fetching bounds.
const (
	modelListEvery   = 10 * time.Minute // refresh interval while serving
	modelListWait    = 3 * time.Second  // how long GET /v1/models waits for a first fetch
	modelListMaxBody = 8 << 20
	modelListMaxIDs  = 10000
	modelIDMaxLen    = 256
)

// modelLists holds the model lists of the providers configured with
// list_models, fetched from their upstreams through each provider's own
// client (its timeouts and connection settings): once at start (or at the
// first GET /v1/models, whichever comes first) and every modelListEvery
// after, in the background. A failed fetch keeps the previous list.
type modelLists struct {
	lists   map[*provider.Provider]*modelList // fixed at New
	clients map[*provider.Provider]*upstream.Client
	log     *log.Logger
}

// modelList is one provider's cached list.
type modelList struct {
	ids     atomic.Pointer[[]string]
	started atomic.Bool   // the first fetch was started
	gaveUp  atomic.Bool   // a caller stopped waiting for the first fetch
	first   chan struct{} // closed when the first fetch ended
	mu      sync.Mutex    // one fetch at a time
}

func newModelLists(reg *provider.Registry, clients map[*provider.Provider]*upstream.Client, lg *log.Logger) *modelLists {
	m := &modelLists{lists: map[*provider.Provider]*modelList{}, clients: clients, log: lg}
	for _, p := range reg.Providers() {
		if p.Config.ListModels && !p.IsMock() {
			m.lists[p] = &modelList{first: make(chan struct{})}
		}
	}
	return m
}

// get returns p's upstream list, or nil when p does not list its models or
// no fetch has succeeded yet (then the registry lists well-known names).
// Before the first fetch has ended the first caller waits for it, at most
// modelListWait; after that wait ran out, callers do not wait again.
func (m *modelLists) get(p *provider.Provider) []string {
	l := m.lists[p]
	if l == nil {
		return nil
	}
	if l.started.CompareAndSwap(false, true) {
		go m.refresh(p, l)
	}
	select {
	case <-l.first:
	default:
		if l.gaveUp.Load() {
			return nil
		}
		t := time.NewTimer(modelListWait)
		select {
		case <-l.first:
		case <-t.C:
			l.gaveUp.Store(true)
		}
		t.Stop()
	}
	if ids := l.ids.Load(); ids != nil {
		return *ids
	}
	return nil
}

// run fetches every list now (unless a GET /v1/models already started
// it) and then every modelListEvery until stop.
func (m *modelLists) run(stop <-chan struct{}) {
	if len(m.lists) == 0 {
		return
	}
	t := time.NewTicker(modelListEvery)
	defer t.Stop()
	for first := true; ; first = false {
		for p, l := range m.lists {
			if !first || l.started.CompareAndSwap(false, true) {
				m.refresh(p, l)
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// refresh fetches p's list and stores it when the fetch succeeded.
func (m *modelLists) refresh(p *provider.Provider, l *modelList) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids, err := m.fetch(p)
	select {
	case <-l.first:
	default:
		defer close(l.first)
	}
	if err != "" {
		m.log.Printf("cannot list the models of provider %s: %s", p.Name, err)
		return
	}
	l.ids.Store(&ids)
}

// fetch GETs p's model list. The error names no URL and no credential.
func (m *modelLists) fetch(p *provider.Provider) ([]string, string) {
	c := m.clients[p]
	if c == nil {
		return nil, "no upstream client"
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(modelListURL(p))
	upstream.SetIdentity(&req.Header)
	c.SetHeaders(&req.Header) // the provider's configured headers, as on generation calls
	setListCredential(&req.Header, p)
	if err := c.Do(req, resp); err != nil {
		return nil, "the upstream is unreachable or timed out"
	}
	body, err := readListBody(resp)
	switch {
	case resp.StatusCode() != fasthttp.StatusOK:
		return nil, "status " + strconv.Itoa(resp.StatusCode())
	case err != nil:
		return nil, "cannot read the answer"
	}
	ids, ok := parseModelList(p.Kind, body)
	if !ok {
		return nil, "the answer is not a model list"
	}
	return ids, ""
}

// readListBody reads a streamed list body, at most modelListMaxBody, and
// closes the stream (dropping the connection when it was not read to its
// end).
func readListBody(resp *fasthttp.Response) ([]byte, error) {
	bs := resp.BodyStream()
	if bs == nil {
		return resp.Body(), nil
	}
	body, err := pool.AppendCapped(nil, bs, modelListMaxBody)
	if err == pool.ErrOverCap {
		err = errUpstreamTooLarge
	}
	if c, ok := bs.(fasthttp.ReadCloserWithError); ok {
		_ = c.CloseWithError(err) // it always returns nil
	} else {
		_ = resp.CloseBodyStream()
	}
	return body, err
}

// modelListURL is the provider's list endpoint, asking for the largest
// page its API allows (Anthropic pages at 20 by default, Gemini at 50).
func modelListURL(p *provider.Provider) string {
	switch p.Kind {
	case config.KindAnthropic:
		return p.BaseURL + "/v1/models?limit=1000"
	case config.KindGemini:
		return p.BaseURL + "/v1beta/models?pageSize=1000"
	}
	return p.BaseURL + "/models" // an OpenAI base URL ends in /v1
}

// setListCredential puts p's next key where its API wants it.
func setListCredential(h *fasthttp.RequestHeader, p *provider.Provider) {
	cred := p.Next()
	if cred == nil {
		return
	}
	switch p.Kind {
	case config.KindAnthropic:
		h.Set("X-Api-Key", cred.Secret)
		h.Set("Anthropic-Version", "2023-06-01")
	case config.KindGemini:
		h.Set("X-Goog-Api-Key", cred.Secret)
	default:
		h.Set("Authorization", "Bearer "+cred.Secret)
	}
}

// parseModelList reads the ids of an OpenAI or Anthropic list
// (data[].id) or a Gemini one (models[].name, "models/" cut). Ids that
// are empty, long or hold a wildcard are skipped: what the upstream sends
// is checked before slipstream lists it.
func parseModelList(kind string, body []byte) ([]string, bool) {
	if !gjson.ValidBytes(body) {
		return nil, false
	}
	path := "data"
	if kind == config.KindGemini {
		path = "models"
	}
	list := gjson.GetBytes(body, path)
	if !list.IsArray() {
		return nil, false
	}
	ids := []string{}
	list.ForEach(func(_, v gjson.Result) bool {
		id := v.Get("id")
		if kind == config.KindGemini {
			id = v.Get("name")
		}
		s := strings.TrimPrefix(id.Str, "models/")
		if id.Type == gjson.String && s != "" && len(s) <= modelIDMaxLen && !provider.IsPattern(s) {
			ids = append(ids, s)
		}
		return len(ids) < modelListMaxIDs
	})
	return ids, true
}
