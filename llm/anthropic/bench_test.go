package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// memTransport answers every request with the same in-memory SSE body: no
// sockets, so the benchmark measures the SDK's decode + accumulate and the
// provider's mapping.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r,
		Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: io.NopCloser(bytes.NewReader(m.body))}, nil
}

// largestStream returns the largest single Anthropic stream among the
// vercel-ai chunk files (re-framed as SSE by replay.ChunksFile).
func largestStream(b *testing.B) (string, []byte) {
	files, _ := filepath.Glob(filepath.Join(shared.Path(b, "data/wire"), "vercel-ai/anthropic/*.chunks.txt"))
	var name string
	var best []byte
	for _, f := range files {
		rs, err := replay.ChunksFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if len(r.Body) > len(best) && bytes.Contains(r.Body, []byte("message_stop")) {
				name, best = filepath.Base(f), r.Body
			}
		}
	}
	if best == nil {
		b.Fatal("no Anthropic chunk files")
	}
	return name, best
}

// BenchmarkStreamDecode streams the largest real Anthropic stream through the
// SDK (decode + Message.Accumulate + mapping) from memory, and reports the
// ratio to a plain bufio line scan of the same bytes measured in the same run
// (metric "x-linescan").
func BenchmarkStreamDecode(b *testing.B) {
	name, body := largestStream(b)
	p := New(Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", HTTPClient: &http.Client{Transport: memTransport{body}}})
	req := testRequest()
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := p.Stream(ctx, req, func(llm.Delta) {}); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	sdk := time.Since(start)
	b.StopTimer()
	lines := 0
	start = time.Now()
	for i := 0; i < b.N; i++ {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			lines += len(sc.Bytes()) & 1
		}
	}
	base := time.Since(start)
	if base > 0 {
		b.ReportMetric(float64(sdk)/float64(base), "x-linescan")
	}
	_ = lines
}

// benchRequest builds a 50-message conversation: user text, assistant text +
// tool_use, user tool_result, with three tools and cache breakpoints.
func benchRequest() *llm.Request {
	r := &llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 8192, System: []llm.Block{llm.TextBlock("You are a coding agent. " + string(bytes.Repeat([]byte("Follow the rules. "), 100)))}}
	for i := 0; i < 3; i++ {
		r.Tools = append(r.Tools, llm.ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: "Reads a file and returns its lines with numbers.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)})
	}
	text := string(bytes.Repeat([]byte("Some source line with code(); "), 40))
	for len(r.Messages) < 50 {
		n := len(r.Messages)
		switch n % 3 {
		case 0:
			r.Messages = append(r.Messages, llm.UserText(fmt.Sprintf("step %d: %s", n, text[:200])))
		case 1:
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.TextBlock("Let me look at the file."),
				llm.ToolUseBlock(fmt.Sprintf("toolu_%04d", n), "tool_0", json.RawMessage(fmt.Sprintf(`{"path":"src/file_%d.go","offset":0,"limit":200}`, n))),
			}})
		case 2:
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(fmt.Sprintf("toolu_%04d", n-1), text, false)}})
		}
	}
	r.Breakpoints = []llm.Breakpoint{{Target: llm.BreakTools}, {Target: llm.BreakSystem}, {Target: llm.BreakMessage, Message: 47, Block: 0}}
	return r
}

// BenchmarkRequestEncode measures params + json.Marshal of a 50-message
// request and reports the ratio to json.Marshal of the llm.Request itself,
// measured in the same run (metric "x-marshal").
func BenchmarkRequestEncode(b *testing.B) {
	req := benchRequest()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		p, err := params(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
	enc := time.Since(start)
	b.StopTimer()
	start = time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := json.Marshal(req); err != nil {
			b.Fatal(err)
		}
	}
	base := time.Since(start)
	if base > 0 {
		b.ReportMetric(float64(enc)/float64(base), "x-marshal")
	}
}
