package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"slipstream/codec"
	"slipstream/internal/testkit"
)

// scenario reads a file of the plain_text translation scenario.
func scenario(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../codec/translate/testdata/scenarios/plain_text/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// distinctUsage rewrites the scenario's token counts (14 in, 10 out, no
// cache) into distinct ones, so that a test can tell every kind apart:
// the neutral usage becomes input 1234 (cache reads 300 included; for
// Anthropic cache writes 100 too), output 567.
func distinctUsage(s string) string {
	for _, r := range []struct{ key, from, to string }{
		{"input_tokens", "14", "834"}, // Anthropic adds 100 written + 300 read; Responses overrides below
		{"cache_creation_input_tokens", "0", "100"},
		{"cache_read_input_tokens", "0", "300"},
		{"output_tokens", "10", "567"},
		{"prompt_tokens", "14", "1234"},
		{"completion_tokens", "10", "567"},
		{"cached_tokens", "0", "300"},
		{"promptTokenCount", "14", "1234"},
		{"candidatesTokenCount", "10", "567"},
		{"cachedContentTokenCount", "0", "300"},
	} {
		re := regexp.MustCompile(`("` + r.key + `"\s*:\s*)` + r.from + `\b`)
		s = re.ReplaceAllString(s, "${1}"+r.to)
	}
	if strings.Contains(s, `"input_tokens_details"`) { // Responses: input counts the cached
		s = regexp.MustCompile(`("input_tokens"\s*:\s*)834\b`).ReplaceAllString(s, "${1}1234")
	}
	return s
}

var usageDialects = []struct {
	d      codec.Dialect
	prefix string
	kind   string
	file   string
}{
	{codec.DialectAnthropic, "a-", "kind: anthropic", "anthropic"},
	{codec.DialectChat, "c-", "kind: openai, api: chat", "chat"},
	{codec.DialectResponses, "r-", "kind: openai, api: responses", "responses"},
	{codec.DialectGemini, "g-", "kind: gemini", "gemini"},
}

// usageUpstream answers a dialect's scenario, streamed or not as asked.
func usageUpstream(t *testing.T, d codec.Dialect, file string) string {
	stream := distinctUsage(scenario(t, "stream."+file+".sse"))
	body := distinctUsage(scenario(t, "response."+file+".json"))
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		streamed := strings.Contains(r.URL.Path, "streamGenerateContent") ||
			(d != codec.DialectGemini && codec.Get(b, "stream").Bool())
		if streamed {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	if d == codec.DialectChat || d == codec.DialectResponses {
		return up.URL + "/v1"
	}
	return up.URL
}

// TestUsageOnEveryPath: every client dialect against every upstream
// dialect (same-dialect and translated), streamed and not, reports the
// upstream's exact token counts in the access log line of the request
// (found by the id the response carries) and in /metrics.
func TestUsageOnEveryPath(t *testing.T) {
	t.Parallel()
	var yml strings.Builder
	yml.WriteString("providers:\n")
	for _, ud := range usageDialects {
		fmt.Fprintf(&yml, "  - {name: %s, %s, base_url: %q, keys: [k], models: [%q]}\n", strings.TrimSuffix(ud.prefix, "-"), ud.kind, usageUpstream(t, ud.d, ud.file), ud.prefix+"*")
	}
	yml.WriteString("timeouts: {keepalive: 0s}\nlog: {access: true, format: json}\n")
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml.String(), ""), &logs)

	modelRe := regexp.MustCompile(`"model"\s*:\s*"[^"]*"`)
	streamRe := regexp.MustCompile(`"stream"\s*:\s*(true|false)`)
	requests := 0
	for _, client := range usageDialects {
		req := scenario(t, "request."+client.file+".json")
		for _, up := range usageDialects {
			for _, stream := range []bool{false, true} {
				model := up.prefix + "model"
				body := modelRe.ReplaceAllString(req, `"model": "`+model+`"`)
				body = streamRe.ReplaceAllString(body, `"stream": `+strconv.FormatBool(stream))
				path := map[codec.Dialect]string{
					codec.DialectAnthropic: "/v1/messages",
					codec.DialectChat:      "/v1/chat/completions",
					codec.DialectResponses: "/v1/responses",
					codec.DialectGemini:    "/v1beta/models/" + model + ":generateContent",
				}[client.d]
				if client.d == codec.DialectGemini && stream {
					path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
				}
				name := fmt.Sprintf("%s_to_%s_stream_%v", client.file, up.file, stream)
				status, h, got := post(t, base+path, body)
				requests++
				if status != 200 {
					t.Fatalf("%s: status %d: %s", name, status, clipT(got))
				}
				id := h.Get(requestIDHeader)
				line := waitLogLine(t, &logs, id)
				want := map[string]float64{"input_tokens": 1234, "output_tokens": 567, "cache_read_tokens": 300, "cache_write_tokens": 0, "reasoning_tokens": 0}
				if up.d == codec.DialectAnthropic {
					want["cache_write_tokens"] = 100
				}
				for k, v := range want {
					if line[k] != v {
						t.Errorf("%s: access log %s=%v, want %v (line %v)", name, k, line[k], v, line)
					}
				}
				if line["estimated"] != false || line["provider"] != strings.TrimSuffix(up.prefix, "-") || line["model"] != model {
					t.Errorf("%s: access log line %v", name, line)
				}
			}
		}
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"stream":true`) && strings.Contains(l, `"ttft_ms":0,`) {
			t.Errorf("a stream without time to first token: %s", l)
		}
	}
	// Every upstream served 8 requests (4 client dialects, streamed and not).
	m := scrape(t, base+"/metrics", "")
	for _, up := range usageDialects {
		p := strings.TrimSuffix(up.prefix, "-")
		labels := `provider="` + p + `",model="` + up.prefix + `*",estimated="false"`
		for kind, per := range map[string]float64{"input": 1234, "output": 567, "cache_read": 300} {
			key := `slipstream_tokens_total{kind="` + kind + `",` + labels + `}`
			if m[key] != 8*per {
				t.Errorf("%s = %v, want %v", key, m[key], 8*per)
			}
		}
	}
	if got := sumFamily(m, "slipstream_requests_total", `status="200"`); got != float64(requests) {
		t.Errorf("slipstream_requests_total with status 200 sums to %v, want %d", got, requests)
	}
}

// waitLogLine returns the JSON access-log line of request id, waiting for
// the end of its stream.
func waitLogLine(t *testing.T, logs *testkit.Buffer, id string) map[string]any {
	t.Helper()
	if id == "" {
		t.Fatal("the response carries no request id")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"id":"`+id+`"`) {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("access log line is not JSON: %v: %s", err, sc.Text())
			}
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no access log line for request %s in:\n%s", id, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// scrape GETs a /metrics page and parses the text format into series ->
// value (comments skipped).
func scrape(t *testing.T, url, token string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	return parseMetrics(t, resp.Body)
}

func parseMetrics(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("malformed metrics line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("malformed metrics value in %q", line)
		}
		m[line[:i]] = v
	}
	return m
}

// sumFamily sums the series of family whose labels contain every one of
// labels.
func sumFamily(m map[string]float64, family string, labels ...string) float64 {
	var sum float64
	for k, v := range m {
		if !strings.HasPrefix(k, family+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(k, l)
		}
		if ok {
			sum += v
		}
	}
	return sum
}
