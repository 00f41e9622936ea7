package providers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// limitCases is one row per wire API: a provider speaking it and a 429 in
// the error shape that API documents (Anthropic "Errors", OpenAI "Error
// codes", Bedrock ThrottlingException, Gemini google.rpc.Status).
var limitCases = []struct {
	provider    string
	api         llm.API
	rateLimited replay.Response
}{
	{"anthropic", llm.APIAnthropic, replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)}},
	{"openai-chat", llm.APIOpenAIChat, replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)}},
	{"openai-responses", llm.APIOpenAIResponses, replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)}},
	{"bedrock", llm.APIBedrock, replay.Response{Status: 429,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Amzn-Errortype": {"ThrottlingException"}},
		Body:   []byte(`{"message":"slow down"}`)}},
	{"gemini", llm.APIGemini, replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`)}},
}

// answer is the streamed reply every case expects when the call succeeds.
const answer = "hello from the limits test"

func reply(t *testing.T, api llm.API) replay.Response {
	t.Helper()
	r, err := replay.Text(api, answer)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// callThrough starts a replay server playing script, builds the named
// provider against it (2 retries, as the runtime sets, and l) and makes one
// Stream call. It returns the call's outcome and the server, closed.
func callThrough(t *testing.T, provider string, l llm.Limits, script ...replay.Response) (*llm.Response, error, *replay.Server) {
	t.Helper()
	srv, err := replay.NewServer(script...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	spec, err := Lookup(provider)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(spec, Options{APIKey: "test", BaseURL: srv.URL(), MaxRetries: 2, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	// A hang guard, not a measurement: every case ends much sooner through
	// the limit under test; without the limits (the code before them) the
	// call would hang, and the guard turns that into a failed assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := p.Stream(ctx, &llm.Request{Model: "limits-test", Messages: []llm.Message{llm.UserText("hi")}}, nil)
	return resp, err, srv
}

// limitError returns err's *llm.LimitError, failing the test when err does
// not wrap kind or names another provider.
func limitError(t *testing.T, err error, kind error, provider string) *llm.LimitError {
	t.Helper()
	var le *llm.LimitError
	if !errors.Is(err, kind) || !errors.As(err, &le) {
		t.Fatalf("err = %v; want a *llm.LimitError wrapping %v", err, kind)
	}
	if le.Provider != provider || !strings.HasPrefix(err.Error(), provider+": ") {
		t.Errorf("error %q (Provider %q) does not name provider %s first", err, le.Provider, provider)
	}
	return le
}

// A stream that stops sending (after its first event, or before its
// headers) and keeps the connection open fails with ErrStreamIdle naming
// the provider and the wait, on every provider, and is not retried.
func TestAttackStreamIdleTimeoutEndsStalledStream(t *testing.T) {
	const idle = 50 * time.Millisecond
	for _, c := range limitCases {
		for _, stall := range []struct {
			name, detail string
			set          func(*replay.Response)
		}{
			{"stalls after one event", "bytes of the response", func(r *replay.Response) { r.StallAfter = 1 }},
			{"never answers", "waiting for the response headers", func(r *replay.Response) { r.StallHeaders = true }},
		} {
			t.Run(c.provider+"/"+stall.name, func(t *testing.T) {
				r := reply(t, c.api)
				stall.set(&r)
				resp, err, srv := callThrough(t, c.provider, llm.Limits{StreamIdleTimeout: idle}, r, reply(t, c.api))
				if resp != nil {
					t.Fatalf("a stalled stream returned a response: %+v", resp.Message)
				}
				le := limitError(t, err, llm.ErrStreamIdle, c.provider)
				if le.Wait != idle || !strings.Contains(err.Error(), "for 50ms") || !strings.Contains(err.Error(), stall.detail) {
					t.Errorf("error %q (Wait %s): want the 50ms wait and %q named", err, le.Wait, stall.detail)
				}
				if n := len(srv.Received()); n != 1 {
					t.Errorf("%d requests; an idle stream must not be retried", n)
				}
			})
		}
	}
}

// A retryable answer asking to wait longer than the max retry delay (100000
// s, or an HTTP date a year ahead) fails at once with the delay in the
// message and the provider's *llm.APIError kept: one request, no sleep, no
// retry, although a good answer was queued behind it.
func TestAttackLongRetryAfterFailsAtOnce(t *testing.T) {
	yearAhead := time.Now().Add(365 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	for _, c := range limitCases {
		for _, ra := range []struct {
			name, value string
			min         time.Duration
		}{
			{"seconds", "100000", 100000 * time.Second},
			{"HTTP date", yearAhead, 364 * 24 * time.Hour},
		} {
			t.Run(c.provider+"/"+ra.name, func(t *testing.T) {
				limited := c.rateLimited
				limited.Header = limited.Header.Clone()
				limited.Header.Set("Retry-After", ra.value)
				resp, err, srv := callThrough(t, c.provider, llm.Limits{}, limited, reply(t, c.api))
				if resp != nil {
					t.Fatalf("got a response: %+v", resp.Message)
				}
				le := limitError(t, err, llm.ErrRetryDelayTooLong, c.provider)
				if le.Wait < ra.min || le.Limit != llm.DefaultMaxRetryDelay || !strings.Contains(err.Error(), le.Wait.String()) {
					t.Errorf("error %q: Wait %s (want ≥ %s, named in the message), Limit %s", err, le.Wait, ra.min, le.Limit)
				}
				var ae *llm.APIError
				if !errors.As(err, &ae) || ae.StatusCode != 429 {
					t.Errorf("error %q does not keep the provider's 429 *llm.APIError", err)
				}
				if n := len(srv.Received()); n != 1 {
					t.Errorf("%d requests; want 1 (no retry)", n)
				}
			})
		}
	}
}

// A short retry-after (retry-after-ms: 1, retry-after: 0) is honoured: the
// request is sent again and the second answer is the call's result.
func TestShortRetryAfterIsHonoured(t *testing.T) {
	for _, c := range limitCases {
		for _, h := range [][2]string{{"Retry-After-Ms", "1"}, {"Retry-After", "0"}} {
			t.Run(c.provider+"/"+h[0], func(t *testing.T) {
				limited := c.rateLimited
				limited.Header = limited.Header.Clone()
				limited.Header.Set(h[0], h[1])
				resp, err, srv := callThrough(t, c.provider, llm.Limits{}, limited, reply(t, c.api))
				if err != nil {
					t.Fatalf("retry after %s: %s did not succeed: %v", h[1], h[0], err)
				}
				if got := resp.Message.Text(); got != answer {
					t.Errorf("answer %q, want %q", got, answer)
				}
				if n := len(srv.Received()); n != 2 {
					t.Errorf("%d requests; want 2 (one retry)", n)
				}
			})
		}
	}
}

// The request deadline ends a stream that keeps sending, slowly (each event
// comes 4× the deadline after the previous one, so the idle timeout never
// fires first).
func TestAttackRequestTimeoutEndsSlowStream(t *testing.T) {
	const deadline = 50 * time.Millisecond
	for _, c := range limitCases {
		t.Run(c.provider, func(t *testing.T) {
			slow := reply(t, c.api)
			slow.Delay = 4 * deadline
			resp, err, srv := callThrough(t, c.provider, llm.Limits{RequestTimeout: deadline}, slow, reply(t, c.api))
			if resp != nil {
				t.Fatalf("got a response past the deadline: %+v", resp.Message)
			}
			le := limitError(t, err, llm.ErrRequestTimeout, c.provider)
			if le.Limit != deadline || !strings.Contains(err.Error(), "50ms") {
				t.Errorf("error %q: want the 50ms deadline named", err)
			}
			if n := len(srv.Received()); n != 1 {
				t.Errorf("%d requests; a timed-out call must not be retried", n)
			}
		})
	}
}
