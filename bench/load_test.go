package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLoadAgainstStubHasNoErrors(t *testing.T) {
	s := NewStub(StubConfig{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := AppendClaudeBody(nil, BodyOpts{Model: "m", Size: 10800, Seed: 1, Stream: true})
	req := &Req{Dialect: Anthropic, Path: "/v1/messages", Body: body, Stream: true}
	opened, closed := false, false
	res, err := Run(context.Background(), LoadConfig{
		URL: s.URL(), Concurrency: 4, Warmup: 20 * time.Millisecond, Duration: 150 * time.Millisecond,
		Next:      func(w, i int) *Req { return req },
		OnMeasure: func(open bool) { opened, closed = opened || open, closed || !open },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Requests < 10 || res.TTFE.P50 <= 0 || res.Lat.P99 < res.Lat.P50 || !opened || !closed {
		t.Fatalf("unexpected result %+v (opened %v closed %v)", res, opened, closed)
	}
}

func TestLoadCountsFailures(t *testing.T) {
	f := func(h http.HandlerFunc, stream bool, check func(*LoadResult) bool) {
		t.Helper()
		srv := httptest.NewServer(h)
		defer srv.Close()
		req := &Req{Dialect: Chat, Path: "/v1/chat/completions", Body: []byte(`{}`), Stream: stream}
		res, err := Run(context.Background(), LoadConfig{
			URL: srv.URL, Concurrency: 2, Duration: 50 * time.Millisecond, MaxPerWorker: 5,
			Next: func(w, i int) *Req { return req },
		})
		if err != nil {
			t.Fatal(err)
		}
		if !check(res) || res.Requests != 0 || res.FirstError == "" {
			t.Fatalf("unexpected result %+v", res)
		}
	}
	f(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"nope"}}`, 500)
	}, false, func(r *LoadResult) bool { return r.Non2xx == 10 && r.Errors == 10 && r.Status[500] == 10 })
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("data: {}\n\n")) // no [DONE]
	}, true, func(r *LoadResult) bool {
		return r.Incomplete == 10 && r.Errors == 10 && strings.Contains(r.FirstError, "terminal")
	})
}

func TestLoadStopsWhenNextReturnsNil(t *testing.T) {
	s := NewStub(StubConfig{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := &Req{Dialect: CountTokens, Path: "/v1/messages/count_tokens", Body: []byte(`{}`)}
	start := time.Now()
	res, err := Run(context.Background(), LoadConfig{
		URL: s.URL(), Concurrency: 3, Duration: 10 * time.Second,
		Next: func(w, i int) *Req {
			if i == 7 {
				return nil
			}
			return req
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 21 || res.Errors != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("want 21 requests and an early end, got %+v after %v", res, time.Since(start))
	}
}

func TestLoadCountsDialectRefusalsApart(t *testing.T) {
	f := func(body string, wantRefused, wantErrors int) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(body))
		}))
		defer srv.Close()
		req := &Req{Dialect: Anthropic, Path: "/v1/messages", Body: []byte(`{}`)}
		res, err := Run(context.Background(), LoadConfig{
			URL: srv.URL, Duration: time.Second, MaxPerWorker: 3,
			Next: func(w, i int) *Req { return req },
			Refusal: func(r *Req, status int, b []byte) bool {
				return status == 429 && r.Dialect.IsDialectError(b)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused != wantRefused || res.Errors != wantErrors {
			t.Fatalf("body %q: refused %d errors %d, want %d and %d", body, res.Refused, res.Errors, wantRefused, wantErrors)
		}
	}
	f(`{"type":"error","error":{"type":"rate_limit_error","message":"busy"}}`, 3, 0)
	f(`{"error":{"message":"busy"}}`, 0, 3) // OpenAI shape on an Anthropic route
	f(`busy`, 0, 3)
}
