package anthropic

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// realSSE returns a real Anthropic SSE recording, with the final blank line
// restored (see anthropicFixtures).
func realSSE(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(shared.Path(t, "data/wire"), rel))
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.TrimRight(b, "\n"), "\n\n"...)
}

const toolUseSSE = "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt"

// serve runs one Stream call against a server playing resp.
func serve(t *testing.T, ctx context.Context, resp replay.Response, onDelta func(llm.Delta)) (*llm.Response, error) {
	t.Helper()
	srv, err := replay.NewServer(resp)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	return New(Config{APIKey: "k", BaseURL: srv.URL()}).Stream(ctx, testRequest(), onDelta)
}

// TestCutStream cuts a real stream at many offsets: every cut is an error
// and never a response; cuts after message_start wrap ErrStreamTruncated.
func TestCutStream(t *testing.T) {
	body := realSSE(t, toolUseSSE)
	startEnd := bytes.Index(body, []byte("\n\n")) + 2
	for _, cut := range []int{1, startEnd / 2, startEnd + 1, len(body) / 4, len(body) / 2, len(body) * 3 / 4, len(body) - 30, len(body) - 2} {
		resp, err := serve(t, context.Background(), replay.Response{Body: body, CutAfter: cut}, nil)
		if err == nil || resp != nil {
			t.Errorf("cut after %d of %d bytes: resp=%v err=%v; want an error", cut, len(body), resp != nil, err)
			continue
		}
		if cut > startEnd && !errors.Is(err, llm.ErrStreamTruncated) {
			t.Errorf("cut after %d bytes (past message_start): %v does not wrap ErrStreamTruncated", cut, err)
		}
	}
}

// TestNoMessageStop serves real streams that end cleanly but early.
func TestNoMessageStop(t *testing.T) {
	body := realSSE(t, toolUseSSE)
	stop := bytes.Index(body, []byte("event: message_stop"))
	delta := bytes.Index(body, []byte("event: message_delta"))
	if stop < 0 || delta < 0 {
		t.Fatal("fixture has no message_stop / message_delta")
	}
	for name, b := range map[string][]byte{
		"without message_stop":  body[:stop],
		"without message_delta": body[:delta],
		"empty body":            {},
	} {
		resp, err := serve(t, context.Background(), replay.Response{Body: b, Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil)
		if !errors.Is(err, llm.ErrStreamTruncated) || resp != nil {
			t.Errorf("%s: resp=%v err=%v; want ErrStreamTruncated", name, resp != nil, err)
		}
	}
}

// TestInStreamError inserts an `event: error` (shape from the Anthropic docs,
// "Streaming Messages" → error events) after real events.
func TestInStreamError(t *testing.T) {
	body := realSSE(t, toolUseSSE)
	at := bytes.Index(body, []byte("event: content_block_stop"))
	ev := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"req_body\"}\n\n"
	b := append(append(append([]byte(nil), body[:at]...), ev...), body[at:]...)
	var deltas int
	resp, err := serve(t, context.Background(), replay.Response{Body: b, Header: http.Header{"Request-Id": {"req_stream"}}},
		func(llm.Delta) { deltas++ })
	var ae *llm.APIError
	if !errors.As(err, &ae) || resp != nil {
		t.Fatalf("resp=%v err=%v; want *llm.APIError", resp != nil, err)
	}
	want := llm.APIError{Provider: "anthropic", StatusCode: 0, Type: "overloaded_error", Message: "Overloaded", RequestID: "req_stream"}
	if *ae != want {
		t.Errorf("APIError %+v, want %+v", *ae, want)
	}
	if deltas == 0 {
		t.Errorf("no deltas before the error event")
	}
}

// TestHTTPErrors checks status, type, message, request id and retry-after of
// HTTP error responses, from the real 429 body of the anthropic-sdk-python
// cassettes and documented 529/500 shapes.
func TestHTTPErrors(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	ins, err := replay.Cassette(filepath.Join(wire, "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestAsyncStream/a8b7dbb8-2321-4624-abdb-7ba2136b5c38.json"))
	if err != nil {
		t.Fatal(err)
	}
	real429 := ins[0].Response
	if real429.Status != 429 {
		t.Fatalf("interaction 0 has status %d", real429.Status)
	}
	want429 := readJSON(real429.Body)
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	overloaded := []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	for _, tc := range []struct {
		name      string
		status    int
		body      []byte
		header    http.Header
		typ, msg  string
		reqID     string
		retryMin  time.Duration
		retryMax  time.Duration
		retryable bool
	}{
		{"429 retry-after-ms", 429, real429.Body, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}, "Request-Id": {"req_429"}},
			want429.ErrType, want429.ErrMessage, "req_429", 1500 * time.Millisecond, 1500 * time.Millisecond, true},
		{"429 retry-after seconds", 429, real429.Body, http.Header{"Retry-After": {"7"}},
			want429.ErrType, want429.ErrMessage, want429.RequestID, 7 * time.Second, 7 * time.Second, true},
		{"529 overloaded", 529, overloaded, http.Header{"Retry-After": {"3"}, "Request-Id": {"req_529"}},
			"overloaded_error", "Overloaded", "req_529", 3 * time.Second, 3 * time.Second, true},
		{"529 retry-after date", 529, overloaded, http.Header{"Retry-After": {date}},
			"overloaded_error", "Overloaded", "", 80 * time.Second, 91 * time.Second, true},
		{"502 html", 502, []byte("<html>bad gateway</html>"), http.Header{"Content-Type": {"text/html"}},
			"", "<html>bad gateway</html>", "", 0, 0, true},
	} {
		for _, nonStreaming := range []bool{false, true} {
			srv, err := replay.NewServer(replay.Response{Status: tc.status, Body: tc.body, Header: tc.header})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := New(Config{BaseURL: srv.URL(), NonStreaming: nonStreaming}).Stream(context.Background(), testRequest(), nil)
			srv.Close()
			var ae *llm.APIError
			if !errors.As(err, &ae) || resp != nil {
				t.Errorf("%s: resp=%v err=%v; want *llm.APIError", tc.name, resp != nil, err)
				continue
			}
			if ae.StatusCode != tc.status || ae.Type != tc.typ || ae.Message != tc.msg || ae.RequestID != tc.reqID ||
				ae.RetryAfter < tc.retryMin || ae.RetryAfter > tc.retryMax || ae.Retryable() != tc.retryable {
				t.Errorf("%s (non-streaming %v): %+v", tc.name, nonStreaming, *ae)
			}
		}
	}
}

// TestContextCancel cancels mid-stream: Stream must return ctx's error long
// before the slowed-down stream would have ended.
func TestContextCancel(t *testing.T) {
	body := realSSE(t, toolUseSSE)
	events := bytes.Count(body, []byte("\n\n"))
	const delay = 40 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	resp, err := serve(t, ctx, replay.Response{Body: body, Delay: delay}, func(llm.Delta) { cancel() })
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) || resp != nil {
		t.Fatalf("resp=%v err=%v; want context.Canceled", resp != nil, err)
	}
	if full := time.Duration(events) * delay; elapsed > full/2 {
		t.Errorf("Stream returned after %v; the whole stream takes %v", elapsed, full)
	}
}

// TestSecondMessageStart serves the hand-written spliced and duplicate
// message_start files as ONE stream: a second message_start is a protocol
// violation, not a silent restart.
func TestSecondMessageStart(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	for _, f := range []string{"vercel-ai/anthropic/duplicate-message-start.chunks.txt", "vercel-ai/anthropic/spliced-message-start.chunks.txt"} {
		rs, err := replay.ChunksFile(filepath.Join(wire, f))
		if err != nil {
			t.Fatal(err)
		}
		var one []byte
		for _, r := range rs {
			one = append(one, r.Body...)
		}
		resp, err := serve(t, context.Background(), replay.Response{Body: one}, nil)
		if err == nil || resp != nil || errors.Is(err, llm.ErrStreamTruncated) || !strings.Contains(err.Error(), "message_start") {
			t.Errorf("%s as one stream: resp=%v err=%v; want a malformed-stream error", f, resp != nil, err)
		}
	}
}

// TestStopReasons rewrites the stop_reason of a real stream to every value
// the API documents (and one unknown value).
func TestStopReasons(t *testing.T) {
	body := realSSE(t, "anthropic-sdk-python/tests/lib/streaming/fixtures/basic_response.txt")
	old := []byte(`"stop_reason":"end_turn"`)
	if bytes.Count(body, old) != 1 {
		t.Fatalf("fixture has %d end_turn stop reasons", bytes.Count(body, old))
	}
	for raw, want := range map[string]llm.StopReason{
		"end_turn": llm.StopEndTurn, "tool_use": llm.StopToolUse, "max_tokens": llm.StopMaxTokens,
		"stop_sequence": llm.StopSequence, "refusal": llm.StopRefusal, "pause_turn": llm.StopPauseTurn,
		"model_context_window_exceeded": llm.StopContextWindow, "brand_new_reason": llm.StopEndTurn,
	} {
		b := bytes.Replace(body, old, []byte(`"stop_reason":"`+raw+`"`), 1)
		resp, err := serve(t, context.Background(), replay.Response{Body: b}, nil)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if resp.StopReason != want || resp.ProviderStopReason != raw {
			t.Errorf("%s: got %q (raw %q), want %q", raw, resp.StopReason, resp.ProviderStopReason, want)
		}
	}
}

// TestCutToolInput: a tool_use whose input is not complete JSON is dropped
// when the model stopped on max_tokens (the real fixture), and is an error
// for any other stop reason.
func TestCutToolInput(t *testing.T) {
	body := realSSE(t, "anthropic-sdk-python/tests/lib/streaming/fixtures/incomplete_partial_json_response.txt")
	resp, err := serve(t, context.Background(), replay.Response{Body: body}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != llm.StopMaxTokens || len(resp.Message.ToolUses()) != 0 || resp.Message.Text() == "" {
		t.Errorf("max_tokens: stop %q, %d tool uses, text %q", resp.StopReason, len(resp.Message.ToolUses()), resp.Message.Text())
	}
	b := bytes.Replace(body, []byte(`"stop_reason":"max_tokens"`), []byte(`"stop_reason":"tool_use"`), 1)
	resp, err = serve(t, context.Background(), replay.Response{Body: b}, nil)
	if err == nil || resp != nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("tool_use stop with cut input: resp=%v err=%v", resp != nil, err)
	}
}

// recordingTransport counts the requests it carries.
type recordingTransport struct{ n *int }

func (r recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	*r.n++
	return http.DefaultTransport.RoundTrip(req)
}

// TestConfig checks that the provider reads no environment variables (the
// SDK's ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY defaults are off), sends the
// configured key as x-api-key, and uses the configured HTTP client.
func TestConfig(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	body := realSSE(t, "anthropic-sdk-python/tests/lib/streaming/fixtures/basic_response.txt")
	srv, err := replay.NewServer(replay.Response{Body: body}, replay.Response{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var n int
	p := New(Config{APIKey: "cfg-key", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: recordingTransport{&n}}})
	if p.Name() != "anthropic" {
		t.Errorf("Name() = %q", p.Name())
	}
	if _, err := p.Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{BaseURL: srv.URL()}).Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 2 || n != 1 {
		t.Fatalf("received %d requests, transport carried %d", len(got), n)
	}
	if k := got[0].Header.Get("X-Api-Key"); k != "cfg-key" {
		t.Errorf("x-api-key %q, want the configured key", k)
	}
	if k := got[1].Header.Get("X-Api-Key"); k != "" {
		t.Errorf("x-api-key %q without a configured key; want none (no env fallback)", k)
	}
	if got[0].Path != "/v1/messages" || got[0].Header.Get("Anthropic-Version") == "" {
		t.Errorf("path %q, anthropic-version %q", got[0].Path, got[0].Header.Get("Anthropic-Version"))
	}
}

// TestRetries replays the real 429, 429, 200 sequence of an anthropic-sdk-python
// cassette with MaxRetries 2: the SDK retries before streaming and the
// provider returns the final stream. (retry-after-ms: 1 is added to the
// recorded 429s to keep the test fast.)
func TestRetries(t *testing.T) {
	ins, err := replay.Cassette(filepath.Join(shared.Path(t, "data/wire"), "anthropic-sdk-python/tests/lib/_parse/__inline_snapshot__/test_messages/TestAsyncStream/a8b7dbb8-2321-4624-abdb-7ba2136b5c38.json"))
	if err != nil {
		t.Fatal(err)
	}
	var script []replay.Response
	for _, in := range ins {
		r := in.Response
		if r.Status == 429 {
			r.Header = r.Header.Clone()
			r.Header.Set("Retry-After-Ms", "1")
		}
		script = append(script, r)
	}
	for _, retries := range []int{2, 1} {
		srv, err := replay.NewServer(script...)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := New(Config{BaseURL: srv.URL(), MaxRetries: retries}).Stream(context.Background(), testRequest(), nil)
		n := len(srv.Received())
		srv.Close()
		var ae *llm.APIError
		switch {
		case retries == 2 && (err != nil || resp.Message.Text() == "" || n != 3):
			t.Errorf("MaxRetries 2: %d requests, err %v", n, err)
		case retries == 1 && (!errors.As(err, &ae) || ae.StatusCode != 429 || n != 2):
			t.Errorf("MaxRetries 1: %d requests, err %v; want the second 429", n, err)
		}
	}
}
