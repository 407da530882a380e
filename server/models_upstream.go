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

	"slipstream/server/config"
	"slipstream/server/provider"
)

// Model list fetching bounds.
const (
	modelListEvery   = 10 * time.Minute // refresh interval while serving
	modelListTimeout = 10 * time.Second // one upstream GET
	modelListMaxBody = 8 << 20
	modelListMaxIDs  = 10000
	modelIDMaxLen    = 256
)

// modelLists holds the model lists of the providers configured with
// list_models, fetched from their upstreams: once at start (or at the
// first GET /v1/models, whichever comes first) and every modelListEvery
// after, in the background. A failed fetch keeps the previous list.
type modelLists struct {
	client fasthttp.Client
	lists  map[*provider.Provider]*modelList // fixed at New
	log    *log.Logger
}

// modelList is one provider's cached list.
type modelList struct {
	ids   atomic.Pointer[[]string]
	tried atomic.Bool
	mu    sync.Mutex // one fetch at a time
}

func newModelLists(reg *provider.Registry, lg *log.Logger) *modelLists {
	m := &modelLists{
		lists:  map[*provider.Provider]*modelList{},
		log:    lg,
		client: fasthttp.Client{Name: "slipstream", MaxResponseBodySize: modelListMaxBody, ReadTimeout: modelListTimeout, WriteTimeout: modelListTimeout},
	}
	for _, p := range reg.Providers() {
		if p.Config.ListModels && !p.IsMock() {
			m.lists[p] = &modelList{}
		}
	}
	return m
}

// get returns p's upstream list, or nil when p does not list its models or
// no fetch has succeeded yet (then the registry lists well-known names).
// The first call before any fetch waits for one.
func (m *modelLists) get(p *provider.Provider) []string {
	l := m.lists[p]
	if l == nil {
		return nil
	}
	if !l.tried.Load() {
		m.refresh(p, l, false)
	}
	if ids := l.ids.Load(); ids != nil {
		return *ids
	}
	return nil
}

// run refreshes every list now and then every modelListEvery until stop.
func (m *modelLists) run(stop <-chan struct{}) {
	if len(m.lists) == 0 {
		return
	}
	force := false
	t := time.NewTicker(modelListEvery)
	defer t.Stop()
	for {
		for p, l := range m.lists {
			m.refresh(p, l, force)
		}
		force = true
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// refresh fetches p's list unless (force unset) a fetch was already tried.
func (m *modelLists) refresh(p *provider.Provider, l *modelList, force bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !force && l.tried.Load() {
		return
	}
	ids, err := m.fetch(p)
	l.tried.Store(true)
	if err != "" {
		m.log.Printf("cannot list the models of provider %s: %s", p.Name, err)
		return
	}
	l.ids.Store(&ids)
}

// fetch GETs p's model list. The error names no URL and no credential.
func (m *modelLists) fetch(p *provider.Provider) ([]string, string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(modelListURL(p))
	setListCredential(&req.Header, p)
	if err := m.client.DoTimeout(req, resp, modelListTimeout); err != nil {
		return nil, "the upstream is unreachable or timed out"
	}
	if sc := resp.StatusCode(); sc != fasthttp.StatusOK {
		return nil, "status " + strconv.Itoa(sc)
	}
	ids, ok := parseModelList(p.Kind, resp.Body())
	if !ok {
		return nil, "the answer is not a model list"
	}
	return ids, ""
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
