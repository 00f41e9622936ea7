package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// Large real streams for the decode benchmarks.
const (
	benchChat      = "vercel-ai/groq/groq-reasoning.chunks.txt"
	benchResponses = "vercel-ai/openai/responses/openai-compaction.1.chunks.txt"
)

// bodyTransport answers every request with the same in-memory SSE body; the
// base URL is 127.0.0.1 but nothing is dialed.
type bodyTransport struct{ body []byte }

func (t bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(t.body)), Request: r}, nil
}

// scanLines is the baseline: a plain bufio line scan of the same bytes.
func scanLines(body []byte) int {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("data:")) {
			n++
		}
	}
	return n
}

// ratio runs op b.N times (timed), then the baseline b.N times, and reports
// op's time as a multiple of the baseline's ("x-baseline").
func ratio(b *testing.B, op, baseline func()) {
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		op()
	}
	el := time.Since(start)
	b.StopTimer()
	start = time.Now()
	for i := 0; i < b.N; i++ {
		baseline()
	}
	if base := time.Since(start); base > 0 {
		b.ReportMetric(float64(el)/float64(base), "x-baseline")
	}
}

func benchStream(b *testing.B, fam family, rel string) {
	rs, err := replay.ChunksFile(filepath.Join(shared.Path(b, "data/wire"), rel))
	if err != nil {
		b.Fatal(err)
	}
	body := rs[0].Body
	cfg := Config{BaseURL: "http://127.0.0.1:1/v1", HTTPClient: &http.Client{Transport: bodyTransport{body}}}
	var p llm.Provider = NewChat(cfg)
	if fam == famResponses {
		p = NewResponses(cfg)
	}
	ctx := context.Background()
	req := simpleRequest()
	if _, err := p.Stream(ctx, req, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	ratio(b, func() {
		if _, err := p.Stream(ctx, req, func(llm.Delta) {}); err != nil {
			b.Fatal(err)
		}
	}, func() { scanLines(body) })
}

// BenchmarkChatStream decodes and accumulates a large real Chat Completions
// stream (Groq reasoning, ~290 KB) through the SDK.
func BenchmarkChatStream(b *testing.B) { benchStream(b, famChat, benchChat) }

// BenchmarkResponsesStream does the same for a large Responses stream.
func BenchmarkResponsesStream(b *testing.B) { benchStream(b, famResponses, benchResponses) }

// bigRequest is a ~50-message tool-using conversation.
func bigRequest() *llm.Request {
	req := &llm.Request{Model: "m", System: []llm.Block{llm.TextBlock(strings.Repeat("You are a careful agent. ", 40))},
		Tools: []llm.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}}
	req.Messages = append(req.Messages, llm.UserText("Summarize the repository."))
	for i := 0; i < 24; i++ {
		id := fmt.Sprintf("call_%02d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockText, Text: fmt.Sprintf("Reading file %d.", i), ItemID: fmt.Sprintf("msg_%02d", i)},
				{Type: llm.BlockToolUse, ID: id, ItemID: "fc_" + id, Name: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"src/file_%02d.go"}`, i))},
			}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, strings.Repeat("package main // line\n", 50), false)}},
		)
	}
	return req
}

// BenchmarkChatParams: chatParams + json.Marshal of a ~50-message request vs
// a plain json.Marshal of the llm.Request.
func BenchmarkChatParams(b *testing.B) {
	req := bigRequest()
	ratio(b, func() {
		p, err := chatParams(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}, func() { _, _ = json.Marshal(req) })
}

// BenchmarkResponsesParams: the same for responsesParams.
func BenchmarkResponsesParams(b *testing.B) {
	req := bigRequest()
	ratio(b, func() {
		p, err := responsesParams(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}, func() { _, _ = json.Marshal(req) })
}
