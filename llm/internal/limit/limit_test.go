package limit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-agent/strata/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"ms first", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond, true},
		{"seconds", http.Header{"Retry-After": {"100000"}}, 100000 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"negative is 0", http.Header{"Retry-After-Ms": {"-5"}}, 0, true},
		{"HTTP date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"past HTTP date is 0", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"too large saturates", http.Header{"Retry-After": {"1e300"}}, time.Duration(1<<63 - 1), true},
		{"garbage ms falls back to retry-after", http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"3"}}, 3 * time.Second, true},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0, false},
		{"NaN", http.Header{"Retry-After": {"NaN"}}, 0, false},
	} {
		if d, ok := RetryAfter(c.header, now); d != c.want || ok != c.ok {
			t.Errorf("%s: RetryAfter = %s, %v; want %s, %v", c.name, d, ok, c.want, c.ok)
		}
	}
}

// step is one scripted attempt: an answer (status, headers, body) or a
// connection error.
type step struct {
	status int
	header http.Header
	body   string
	err    error
}

// script is a fake transport answering attempt n with steps[n] and
// recording each request body it got.
type script struct {
	steps  []step
	bodies []string
}

func (s *script) next(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	s.bodies = append(s.bodies, string(b))
	st := s.steps[min(len(s.bodies), len(s.steps))-1]
	if st.err != nil {
		return nil, st.err
	}
	h := st.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: st.status, Header: h, Body: io.NopCloser(strings.NewReader(st.body)), Request: r}, nil
}

// post sends one request with a body that cannot be rewound through l and
// next, inside Call, reads the answer, and returns the final status (0 when
// none arrived) and the error.
func post(t *testing.T, l *Limiter, next func(*http.Request) (*http.Response, error)) (int, error) {
	t.Helper()
	return postCtx(t, context.Background(), l, next)
}

func postCtx(t *testing.T, ctx context.Context, l *Limiter, next func(*http.Request) (*http.Response, error)) (int, error) {
	t.Helper()
	status := 0
	_, err := l.Call(ctx, func(ctx context.Context) (*llm.Response, error) {
		r, err := http.NewRequestWithContext(ctx, "POST", "http://127.0.0.1:1/v1/messages", io.NopCloser(strings.NewReader(`{"q":1}`)))
		if err != nil {
			return nil, err
		}
		resp, err := l.send(r, next)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		status = resp.StatusCode
		if status >= 400 {
			b, _ := io.ReadAll(resp.Body)
			return nil, fmt.Errorf("status %d: %s", status, b)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		return &llm.Response{}, nil
	})
	return status, err
}

// The retry policy, run on the fake clock of a synctest bubble: which
// answers are retried, how often, after which wait, with the request body
// sent again whole.
func TestRetryPolicy(t *testing.T) {
	ok := step{status: 200}
	refused := errors.New("connect: connection refused")
	for _, c := range []struct {
		name     string
		steps    []step
		status   int           // final status, 0 = an error
		attempts int           // requests sent
		waited   time.Duration // fake time between the first and the last attempt; -1 = the backoff
		kind     error         // the *llm.LimitError's kind, if any
	}{
		{"503 then 200", []step{{status: 503, header: http.Header{"Retry-After": {"2"}}}, ok}, 200, 2, 2 * time.Second, nil},
		{"429 retry-after-ms", []step{{status: 429, header: http.Header{"Retry-After-Ms": {"1500"}}}, ok}, 200, 2, 1500 * time.Millisecond, nil},
		{"408 and 409 are retried", []step{{status: 408, header: http.Header{"Retry-After": {"0"}}}, {status: 409, header: http.Header{"Retry-After": {"0"}}}, ok}, 200, 3, 0, nil},
		{"400 is not", []step{{status: 400}, ok}, 400, 1, 0, nil},
		{"x-should-retry true retries a 400", []step{{status: 400, header: http.Header{"X-Should-Retry": {"true"}, "Retry-After": {"1"}}}, ok}, 200, 2, time.Second, nil},
		{"x-should-retry false stops a 429", []step{{status: 429, header: http.Header{"X-Should-Retry": {"false"}}}, ok}, 429, 1, 0, nil},
		{"connection error then 200", []step{{err: refused}, ok}, 200, 2, -1, nil},
		{"backoff without retry-after", []step{{status: 500}, ok}, 200, 2, -1, nil},
		{"retries run out: the last answer is returned", []step{{status: 529, header: http.Header{"Retry-After": {"0"}}}}, 529, 3, 0, nil},
		{"retries run out on a connection error", []step{{err: refused}}, 0, 3, -1, nil},
		{"a long wait on the last attempt is just the answer", []step{{status: 429, header: http.Header{"Retry-After": {"0"}}}, {status: 429, header: http.Header{"Retry-After": {"0"}}},
			{status: 429, header: http.Header{"Retry-After": {"100000"}}}}, 429, 3, 0, nil},
		{"retry-after over the cap fails at once", []step{{status: 429, header: http.Header{"Retry-After-Ms": {"60001"}}}, ok}, 429, 1, 0, llm.ErrRetryDelayTooLong},
		{"RetryInfo in the body over the cap", []step{{status: 429, body: `{"delay":"2m"}`}, ok}, 429, 1, 0, llm.ErrRetryDelayTooLong},
		{"RetryInfo in the body under the cap", []step{{status: 429, body: `{"delay":"30s"}`}, ok}, 200, 2, 30 * time.Second, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := New(Options{Provider: "p", MaxRetries: 2, Streaming: true, BodyRetryDelay: func(b []byte) (time.Duration, bool) {
					var d struct{ Delay string }
					if json.Unmarshal(b, &d) != nil || d.Delay == "" {
						return 0, false
					}
					v, err := time.ParseDuration(d.Delay)
					return v, err == nil
				}})
				s := &script{steps: c.steps}
				start := time.Now()
				var last time.Time
				status, err := post(t, l, func(r *http.Request) (*http.Response, error) { last = time.Now(); return s.next(r) })
				if status != c.status || len(s.bodies) != c.attempts {
					t.Fatalf("status %d after %d attempts (err %v); want %d after %d", status, len(s.bodies), err, c.status, c.attempts)
				}
				for i, b := range s.bodies {
					if b != `{"q":1}` {
						t.Errorf("attempt %d sent body %q", i, b)
					}
				}
				waited := last.Sub(start)
				if c.waited >= 0 && waited != c.waited {
					t.Errorf("waited %s before the last attempt; want %s", waited, c.waited)
				}
				if c.waited < 0 {
					// The backoff before retry n+1 is 0.5 s × 2^n less up to 25 %.
					var full time.Duration
					for n := range c.attempts - 1 {
						full += 500 * time.Millisecond << n
					}
					if waited > full || waited < full*3/4 {
						t.Errorf("waited %s before the last attempt; want the backoff, in [%s, %s]", waited, full*3/4, full)
					}
				}
				var le *llm.LimitError
				if c.kind != nil {
					if !errors.Is(err, c.kind) || !errors.As(err, &le) || le.Wait <= le.Limit || le.Err == nil ||
						le.Err.Error() != "status 429: "+c.steps[0].body || !strings.Contains(err.Error(), le.Wait.String()) {
						t.Errorf("err %v; want a *llm.LimitError %v naming the wait and keeping the whole 429", err, c.kind)
					}
				} else if errors.As(err, &le) {
					t.Errorf("unexpected limit error %v", err)
				}
			})
		})
	}
}

// timedBody is a fake streamed answer: each chunk comes gap after the
// previous read, then the body ends (or, with stall, sends nothing more
// until the request is cancelled).
type timedBody struct {
	ctx    context.Context
	gap    time.Duration
	chunks []string
	stall  bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	if len(b.chunks) == 0 && !b.stall {
		return 0, io.EOF
	}
	wait := b.gap
	if len(b.chunks) == 0 {
		wait = 1<<63 - 1
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-t.C:
	}
	n := copy(p, b.chunks[0])
	b.chunks = b.chunks[1:]
	return n, nil
}

func (b *timedBody) Close() error { return nil }

// answering returns a fake transport whose answer headers come after
// headerWait (never, when < 0) and whose body is body (ctx set per request).
func answering(headerWait time.Duration, body timedBody) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		wait := headerWait
		if wait < 0 {
			wait = 1<<63 - 1
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-t.C:
		}
		b := body
		b.ctx = r.Context()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &b, Request: r}, nil
	}
}

// The idle timeout, the request deadline and their defaults, on the fake
// clock of a synctest bubble: each case ends exactly when its limit says,
// never by wall-clock time.
func TestTimeouts(t *testing.T) {
	chunks := []string{"data: 1\n\n", "data: 2\n\n", "data: 3\n\n"}
	for _, c := range []struct {
		name   string
		o      Options
		next   func(*http.Request) (*http.Response, error)
		took   time.Duration // fake time the call took
		kind   error         // the *llm.LimitError's kind; nil = success
		detail string
	}{
		{"no headers: default idle timeout", Options{Streaming: true}, answering(-1, timedBody{}),
			llm.DefaultStreamIdleTimeout, llm.ErrStreamIdle, "while waiting for the response headers"},
		{"stall after 2 chunks", Options{Streaming: true, Limits: llm.Limits{StreamIdleTimeout: time.Minute}},
			answering(time.Second, timedBody{gap: time.Second, chunks: chunks[:2], stall: true}),
			3*time.Second + time.Minute, llm.ErrStreamIdle, "after 18 bytes of the response"},
		{"gaps just under the idle timeout", Options{Streaming: true},
			answering(4*time.Minute, timedBody{gap: llm.DefaultStreamIdleTimeout - time.Second, chunks: chunks}),
			4*time.Minute + 3*(llm.DefaultStreamIdleTimeout-time.Second), nil, ""},
		{"idle timeout off", Options{Streaming: true, Limits: llm.Limits{StreamIdleTimeout: -1}},
			answering(time.Hour, timedBody{gap: time.Hour, chunks: chunks}), 4 * time.Hour, nil, ""},
		{"non-streaming: no idle timeout", Options{},
			answering(20*time.Minute, timedBody{gap: time.Second, chunks: chunks}), 20*time.Minute + 3*time.Second, nil, ""},
		{"request deadline ends a slow stream", Options{Streaming: true, Limits: llm.Limits{RequestTimeout: 10 * time.Minute}},
			answering(time.Second, timedBody{gap: 4 * time.Minute, chunks: []string{"a", "b", "c", "d"}}),
			10 * time.Minute, llm.ErrRequestTimeout, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c.o.Provider, c.o.MaxRetries = "p", 2
				attempts := 0
				start := time.Now()
				_, err := post(t, New(c.o), func(r *http.Request) (*http.Response, error) { attempts++; return c.next(r) })
				if took := time.Since(start); took != c.took {
					t.Errorf("took %s; want %s", took, c.took)
				}
				if attempts != 1 {
					t.Errorf("%d attempts; a timed-out request is never retried", attempts)
				}
				if c.kind == nil {
					if err != nil {
						t.Fatalf("err %v; want success", err)
					}
					return
				}
				var le *llm.LimitError
				if !errors.Is(err, c.kind) || !errors.As(err, &le) || le.Provider != "p" || le.Detail != c.detail {
					t.Fatalf("err %#v; want a *llm.LimitError %v from p, detail %q", err, c.kind, c.detail)
				}
			})
		})
	}
}

// A cancelled caller gets its own context error, never a limit error, even
// when a limit would have fired later.
func TestCallerCancelIsNotALimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l := New(Options{Provider: "p", Streaming: true, Limits: llm.Limits{RequestTimeout: time.Hour}})
		_, err := postCtx(t, ctx, l, answering(-1, timedBody{}))
		var le *llm.LimitError
		if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &le) {
			t.Errorf("err %v; want the caller's context.DeadlineExceeded", err)
		}
	})
}
