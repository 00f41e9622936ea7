package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// fixtureCase is one recorded response to serve, with how to ask for it.
type fixtureCase struct {
	name      string
	format    string // "sse", "chunks", "json", "cassette"
	resp      replay.Response
	streaming bool
	reqBody   []byte // cassettes: the recorded request body
	reqHeader map[string][]string
}

// excludedFixtures are Anthropic-family files under data/wire that are
// deliberately not served, with the reason. Every other file INDEX.md lists
// as "Anthropic Messages" must be covered (TestFixtureIndexCoverage).
var excludedFixtures = map[string]string{
	// Listed in INDEX.md as "OpenAI-compatible Chat (Anthropic compat endpoint)":
	// Chat Completions chunks ending in [DONE], not Messages SSE.
	"vercel-ai/openai-compatible/chat/anthropic-fallback-tool-call.sse": "OpenAI Chat Completions wire format (Anthropic's OpenAI-compatible endpoint), not the Messages API",
}

// excludedInteractions names cassette interactions not served, with the reason.
var excludedInteractions = map[string]string{
	"pydantic-ai/cassettes/test_anthropic/test_anthropic_count_tokens_error.yaml#0": "POST /v1/messages/count_tokens: another endpoint",
}

// anthropicFixtures collects every Anthropic Messages fixture as served
// responses.
func anthropicFixtures(t *testing.T) (wire string, cases []fixtureCase) {
	t.Helper()
	wire = shared.Path(t, "data/wire")
	glob := func(pat string) []string {
		m, err := filepath.Glob(filepath.Join(wire, pat))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(m)
		return m
	}
	rel := func(p string) string { r, _ := filepath.Rel(wire, p); return filepath.ToSlash(r) }
	var sse []string
	sse = append(sse, glob("anthropic-sdk-python/tests/lib/streaming/fixtures/*.txt")...)
	sse = append(sse, glob("anthropic-sdk-python/tests/fixtures/fable-fallback/*.sse")...)
	sse = append(sse, glob("anthropic-sdk-go/lib/betafallback/testdata/*/*.sse")...)
	for _, f := range sse {
		r, err := replay.SSEFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fixtureCase{name: rel(f), format: "sse", resp: r, streaming: true})
		if !bytes.HasSuffix(r.Body, []byte("\n\n")) {
			// The anthropic-sdk-python streaming fixtures were saved without
			// the blank line that ends the last event (message_stop), so per
			// the SSE spec that event is never dispatched and the file as is
			// must read as truncated (asserted by the case above). Served
			// again with the terminator restored, they give the complete
			// response the API sent.
			r2 := r
			r2.Body = append(bytes.TrimRight(append([]byte(nil), r.Body...), "\n"), "\n\n"...)
			cases = append(cases, fixtureCase{name: rel(f) + "#terminated", format: "sse", resp: r2, streaming: true})
		}
	}
	for _, f := range glob("vercel-ai/anthropic/*.chunks.txt") {
		rs, err := replay.ChunksFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			cases = append(cases, fixtureCase{name: fmt.Sprintf("%s#stream%d", rel(f), i), format: "chunks", resp: r, streaming: true})
		}
	}
	for _, f := range glob("vercel-ai/anthropic/*.json") {
		r, err := replay.JSONFile(f, 0)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fixtureCase{name: rel(f), format: "json", resp: r})
	}
	var cassettes []string
	cassettes = append(cassettes, glob("pydantic-ai/cassettes/test_anthropic/*.yaml")...)
	cassettes = append(cassettes, glob("anthropic-sdk-go/toolrunner/testdata/cassettes/*.yaml")...)
	filepath.WalkDir(filepath.Join(wire, "anthropic-sdk-python"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(p, "__inline_snapshot__") && strings.HasSuffix(p, ".json") {
			cassettes = append(cassettes, p)
		}
		return nil
	})
	for _, f := range cassettes {
		ins, err := replay.Cassette(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range ins {
			name := fmt.Sprintf("%s#%d", rel(f), i)
			if _, ok := excludedInteractions[name]; ok {
				continue
			}
			u, err := url.Parse(in.Request.Path)
			if err != nil || u.Path != "/v1/messages" {
				t.Errorf("%s: unexpected endpoint %q: list it in excludedInteractions", name, in.Request.Path)
				continue
			}
			var probe struct {
				Stream bool `json:"stream"`
			}
			if err := json.Unmarshal(in.Request.Body, &probe); err != nil {
				t.Fatalf("%s: request body: %v", name, err)
			}
			cases = append(cases, fixtureCase{name: name, format: "cassette", resp: in.Response, streaming: probe.Stream,
				reqBody: in.Request.Body, reqHeader: in.Request.Header})
		}
	}
	return wire, cases
}

// TestFixtureIndexCoverage checks that every file INDEX.md lists as Anthropic
// Messages is served by TestFixtures, and that every exclusion still exists.
func TestFixtureIndexCoverage(t *testing.T) {
	wire, cases := anthropicFixtures(t)
	served := map[string]bool{}
	for _, c := range cases {
		served[strings.SplitN(c.name, "#", 2)[0]] = true
	}
	for k := range excludedInteractions {
		served[strings.SplitN(k, "#", 2)[0]] = true
	}
	_, rows := shared.WireIndex(t, func(r shared.WireRow) bool { return strings.Contains(r.API, "Anthropic") })
	listed := len(rows)
	for _, r := range rows {
		if _, ok := excludedFixtures[r.Path]; ok {
			continue
		}
		if !served[r.Path] {
			t.Errorf("INDEX.md lists %s (%s) but no test serves it", r.Path, r.API)
		}
	}
	if listed < 120 {
		t.Errorf("INDEX.md lists only %d Anthropic files; expected ≥ 120", listed)
	}
	for p := range excludedFixtures {
		if _, err := os.Stat(filepath.Join(wire, p)); err != nil {
			t.Errorf("excluded fixture %s: %v", p, err)
		}
	}
	counts := map[string]int{}
	for _, c := range cases {
		counts[c.format]++
	}
	t.Logf("INDEX.md Anthropic files: %d; served responses per format: %v; excluded files: %d, interactions: %d",
		listed, counts, len(excludedFixtures), len(excludedInteractions))
}

// testRequest is the request sent for fixtures whose recorded request is not
// used.
func testRequest() *llm.Request {
	return &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("hi")}}
}

// TestFixtures serves every Anthropic Messages fixture through the SDK and
// checks the provider's response against the independent reader.
func TestFixtures(t *testing.T) {
	_, cases := anthropicFixtures(t)
	outcomes := map[outcome]int{}
	for _, c := range cases {
		outcomes[expect(c).Outcome]++
		t.Run(c.name, func(t *testing.T) {
			srv, err := replay.NewServer(c.resp)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p := New(Config{APIKey: "test-key", BaseURL: srv.URL(), NonStreaming: !c.streaming})
			var deltas []llm.Delta
			resp, err := p.Stream(context.Background(), testRequest(), func(d llm.Delta) { deltas = append(deltas, d) })
			want := expect(c)
			checkOutcome(t, want, resp, err, c.resp)
			if want.Outcome == outOK && resp != nil {
				checkDeltas(t, resp, deltas, want.DroppedTool)
			}
			if got := srv.Received(); len(got) != 1 || got[0].Header.Get("X-Api-Key") != "test-key" {
				t.Errorf("server received %d requests (x-api-key %q)", len(got), headerOf(got))
			}
		})
	}
	t.Logf("%d responses served: %d complete, %d truncated, %d malformed, %d API errors",
		len(cases), outcomes[outOK], outcomes[outTruncated], outcomes[outMalformed], outcomes[outAPIError])
	if outcomes[outOK] < 150 || outcomes[outAPIError] < 5 {
		t.Errorf("too few complete responses or errors: %v", outcomes)
	}
}

func headerOf(rs []replay.Request) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Header.Get("X-Api-Key")
}

// expect computes the expectation for a case from its served bytes.
func expect(c fixtureCase) expectation {
	if c.resp.Status >= 400 {
		e := readJSON(c.resp.Body)
		e.Outcome = outAPIError
		return e
	}
	if replay.SniffContentType(c.resp.Body) == "application/json" {
		return readJSON(c.resp.Body)
	}
	return readSSE(c.resp.Body)
}

// checkOutcome compares the provider's result with the expectation.
func checkOutcome(t *testing.T, want expectation, resp *llm.Response, err error, served replay.Response) {
	t.Helper()
	switch want.Outcome {
	case outTruncated:
		if !errors.Is(err, llm.ErrStreamTruncated) || resp != nil {
			t.Fatalf("want ErrStreamTruncated and no response, got resp=%v err=%v", resp != nil, err)
		}
		return
	case outMalformed:
		if err == nil || resp != nil {
			t.Fatalf("want a malformed-stream error, got resp=%v err=%v", resp != nil, err)
		}
		return
	case outAPIError:
		var ae *llm.APIError
		if !errors.As(err, &ae) || resp != nil {
			t.Fatalf("want *llm.APIError, got resp=%v err=%v", resp != nil, err)
		}
		status := served.Status
		if status == 0 || status == 200 {
			status = 0
		}
		wantID := served.Header.Get("request-id")
		if wantID == "" {
			wantID = want.RequestID // the body's request_id
		}
		wantRetry := retryAfterOf(served.Header.Get("retry-after-ms"), served.Header.Get("retry-after"))
		if ae.Provider != "anthropic" || ae.StatusCode != status || ae.Type != want.ErrType || ae.Message != want.ErrMessage ||
			ae.RequestID != wantID || ae.RetryAfter != wantRetry {
			t.Errorf("APIError %+v; want status %d type %q message %q request id %q retry %v",
				ae, status, want.ErrType, want.ErrMessage, wantID, wantRetry)
		}
		return
	}
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.ID != want.ID || resp.Model != want.Model {
		t.Errorf("id/model %q/%q, want %q/%q", resp.ID, resp.Model, want.ID, want.Model)
	}
	if resp.ProviderStopReason != want.StopReason || string(resp.StopReason) != want.StopReason {
		t.Errorf("stop reason %q (raw %q), want %q", resp.StopReason, resp.ProviderStopReason, want.StopReason)
	}
	wantUsage := llm.Usage{Input: want.Input, Output: want.Output, CacheRead: want.CacheRead, CacheWrite: want.CacheWrite,
		CacheWrite1h: want.CacheWrite1h, Total: want.Input + want.Output + want.CacheRead + want.CacheWrite}
	if resp.Usage != wantUsage {
		t.Errorf("usage %+v, want %+v", resp.Usage, wantUsage)
	}
	if resp.Message.Role != llm.RoleAssistant {
		t.Errorf("role %q", resp.Message.Role)
	}
	got := resp.Message.Content
	if len(got) != len(want.Blocks) {
		t.Fatalf("%d blocks %s, want %d %v", len(got), blockTypes(got), len(want.Blocks), want.Blocks)
	}
	for i, w := range want.Blocks {
		g := got[i]
		ok := string(g.Type) == w.Type
		switch w.Type {
		case "text":
			ok = ok && g.Text == w.Text
		case "thinking":
			ok = ok && g.Text == w.Text && g.Signature == w.Signature
		case "redacted_thinking":
			ok = ok && string(g.Data) == w.Data && w.Data != ""
		case "tool_use":
			ok = ok && g.ID == w.ID && g.Name == w.Name && jsonEqual(string(g.Input), w.Input)
		}
		if !ok {
			t.Errorf("block %d = %+v\nwant %+v", i, g, w)
		}
	}
	if err := resp.Message.Validate(); err != nil {
		t.Errorf("returned message does not validate: %v", err)
	}
}

func blockTypes(bs []llm.Block) string {
	var s []string
	for _, b := range bs {
		s = append(s, string(b.Type))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// checkDeltas checks that the deltas, grouped by index, concatenate to the
// final blocks: text and thinking text exactly, tool arguments as JSON (an
// empty concatenation stands for {}), with the call's id and name on every
// fragment. droppedTool allows fragments for one block past the end.
func checkDeltas(t *testing.T, resp *llm.Response, deltas []llm.Delta, droppedTool bool) {
	t.Helper()
	content := resp.Message.Content
	byIndex := map[int]*strings.Builder{}
	for _, d := range deltas {
		if d.Index < 0 || d.Index >= len(content) {
			if droppedTool && d.Index == len(content) && d.Type == llm.DeltaToolCall {
				continue
			}
			t.Fatalf("delta %+v: index out of range (%d blocks)", d, len(content))
		}
		b := content[d.Index]
		wantType := map[llm.BlockType]llm.DeltaType{llm.BlockText: llm.DeltaText, llm.BlockThinking: llm.DeltaThinking, llm.BlockToolUse: llm.DeltaToolCall}[b.Type]
		if d.Type != wantType {
			t.Fatalf("delta %+v for a %s block", d, b.Type)
		}
		if d.Type == llm.DeltaToolCall && (d.ID != b.ID || d.Name != b.Name) {
			t.Errorf("tool delta id/name %q/%q, block %q/%q", d.ID, d.Name, b.ID, b.Name)
		}
		if byIndex[d.Index] == nil {
			byIndex[d.Index] = &strings.Builder{}
		}
		byIndex[d.Index].WriteString(d.Text)
	}
	for i, b := range content {
		s := ""
		if sb := byIndex[i]; sb != nil {
			s = sb.String()
		}
		switch b.Type {
		case llm.BlockText, llm.BlockThinking:
			if s != b.Text {
				t.Errorf("block %d: deltas %q, final %q", i, s, b.Text)
			}
		case llm.BlockToolUse:
			if s == "" {
				s = "{}"
			}
			if !jsonEqual(s, string(b.Input)) {
				t.Errorf("block %d: tool deltas %q, final input %s", i, s, b.Input)
			}
		}
	}
}

// retryAfterOf is the test's own reading of the retry headers.
func retryAfterOf(ms, s string) time.Duration {
	if n, err := strconv.Atoi(ms); err == nil {
		return time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second
	}
	return 0
}
