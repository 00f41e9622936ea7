package openai

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// Real streams the fault tests damage.
const (
	chatSSE      = "openai-python/.inline-snapshot/external/f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin" // parallel tool calls
	respChunks   = "vercel-ai/openai/responses/openai-reasoning-encrypted-content.1.chunks.txt"
	chatError429 = "pydantic-ai/cassettes/test_openrouter/test_openrouter_errors_raised.yaml"
)

func loadChatSSE(t testing.TB) replay.Response {
	r, err := replay.SSEFile(filepath.Join(shared.Path(t, "data/wire"), chatSSE))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loadRespStream(t testing.TB) replay.Response {
	rs, err := replay.ChunksFile(filepath.Join(shared.Path(t, "data/wire"), respChunks))
	if err != nil {
		t.Fatal(err)
	}
	return rs[0]
}

func run(t *testing.T, fam family, resp replay.Response, ctx context.Context, onDelta func(llm.Delta)) (*llm.Response, error) {
	t.Helper()
	srv, err := replay.NewServer(resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return provider(fam, srv, false).Stream(ctx, simpleRequest(), onDelta)
}

// TestTruncatedStreams: a real stream cut mid-connection at several points,
// or ending cleanly before its terminal event, is ErrStreamTruncated and
// never a response.
func TestTruncatedStreams(t *testing.T) {
	chat, resp := loadChatSSE(t), loadRespStream(t)
	done := bytes.Index(chat.Body, []byte("data: [DONE]"))
	completed := bytes.Index(resp.Body, []byte("event: response.completed"))
	if done < 0 || completed < 0 {
		t.Fatal("fixtures lack their terminal events")
	}
	cut := func(r replay.Response, n int) replay.Response { r.CutAfter = n; return r }
	clean := func(r replay.Response, n int) replay.Response { r.Body = r.Body[:n]; return r }
	cases := []struct {
		name string
		fam  family
		resp replay.Response
	}{
		{"chat cut at 10%", famChat, cut(chat, len(chat.Body)/10)},
		{"chat cut mid-event at 50%", famChat, cut(chat, len(chat.Body)/2+7)},
		{"chat cut before [DONE]", famChat, cut(chat, done)},
		{"chat clean end without [DONE]", famChat, clean(chat, done)},
		{"chat clean end before finish_reason", famChat, clean(chat, len(chat.Body)/3)},
		{"responses cut at 50%", famResponses, cut(resp, len(resp.Body)/2)},
		{"responses cut inside response.completed", famResponses, cut(resp, completed+40)},
		{"responses clean end without response.completed", famResponses, clean(resp, completed)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := run(t, c.fam, c.resp, context.Background(), nil)
			if !errors.Is(err, llm.ErrStreamTruncated) || got != nil {
				t.Fatalf("got (%v, %v); want nil and ErrStreamTruncated", got, err)
			}
		})
	}
	// The intact streams succeed, so the failures above come from the damage.
	for _, c := range []struct {
		fam  family
		resp replay.Response
	}{{famChat, chat}, {famResponses, resp}} {
		if _, err := run(t, c.fam, c.resp, context.Background(), nil); err != nil {
			t.Errorf("%s intact stream: %v", c.fam, err)
		}
	}
}

// TestRateLimit: a real OpenRouter 429 body served with retry headers maps
// to an APIError carrying status, code, message, request id and RetryAfter.
func TestRateLimit(t *testing.T) {
	ins, err := replay.Cassette(filepath.Join(shared.Path(t, "data/wire"), chatError429))
	if err != nil {
		t.Fatal(err)
	}
	base := ins[0].Response
	cases := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}, time.Hour},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		r := base
		r.Header = base.Header.Clone()
		for k, v := range c.header {
			r.Header[k] = v
		}
		r.Header.Set("X-Request-Id", "req_test_1")
		_, err := run(t, famChat, r, context.Background(), nil)
		var ae *llm.APIError
		if !errors.As(err, &ae) {
			t.Fatalf("error %v; want *llm.APIError", err)
		}
		if ae.StatusCode != 429 || ae.Code != "429" || ae.Message != "Provider returned error" || ae.RequestID != "req_test_1" || !ae.Retryable() {
			t.Errorf("APIError %+v", *ae)
		}
		if d := ae.RetryAfter - c.want; d < -2*time.Second || d > 0 {
			t.Errorf("RetryAfter %v, want %v (header %v)", ae.RetryAfter, c.want, c.header)
		}
	}
}

// TestRetryThenStream: with MaxRetries=1 the SDK retries a 429 (after its
// retry-after-ms) and the second, real stream is returned.
func TestRetryThenStream(t *testing.T) {
	ins, err := replay.Cassette(filepath.Join(shared.Path(t, "data/wire"), chatError429))
	if err != nil {
		t.Fatal(err)
	}
	limited := ins[0].Response
	limited.Header = limited.Header.Clone()
	limited.Header.Set("Retry-After-Ms", "10")
	srv, err := replay.NewServer(limited, loadChatSSE(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := NewChat(Config{Name: "openrouter", BaseURL: srv.URL() + "/api/v1", MaxRetries: 1})
	got, err := p.Stream(context.Background(), simpleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Received()) != 2 || len(got.Message.ToolUses()) != 2 {
		t.Errorf("requests=%d tool calls=%d; want 2 and 2", len(srv.Received()), len(got.Message.ToolUses()))
	}
	if p.Name() != "openrouter" || srv.Received()[0].Path != "/api/v1/chat/completions" {
		t.Errorf("name %q path %q", p.Name(), srv.Received()[0].Path)
	}
}

// TestCancelMidStream: cancelling after the first delta of a slow stream
// returns ctx's error without the rest of the stream.
func TestCancelMidStream(t *testing.T) {
	for _, c := range []struct {
		fam  family
		resp replay.Response
	}{{famChat, loadChatSSE(t)}, {famResponses, loadRespStream(t)}} {
		t.Run(string(c.fam), func(t *testing.T) {
			total := bytes.Count(c.resp.Body, []byte("\n\n"))
			c.resp.Delay = 20 * time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			got, err := run(t, c.fam, c.resp, ctx, func(llm.Delta) {
				n++
				cancel()
			})
			if !errors.Is(err, context.Canceled) || got != nil {
				t.Fatalf("got (%v, %v); want context.Canceled", got, err)
			}
			if n == 0 || n > 3 {
				t.Errorf("%d deltas delivered after cancel (stream has %d events)", n, total)
			}
		})
	}
}

// TestNonJSONErrorBody: an error status whose body is not an OpenAI error
// object still maps to an APIError with the status.
func TestNonJSONErrorBody(t *testing.T) {
	for _, body := range []string{"upstream failure", `{"detail":"bad"}`, ""} {
		resp := replay.Response{Status: 503, Body: []byte(body), Header: http.Header{"Content-Type": {"text/plain"}}}
		_, err := run(t, famChat, resp, context.Background(), nil)
		var ae *llm.APIError
		if !errors.As(err, &ae) || ae.StatusCode != 503 || ae.Provider != "openai-chat" {
			t.Errorf("body %q: error %T %v; want APIError 503", body, err, err)
		}
	}
}
