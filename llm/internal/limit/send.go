package limit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-agent/strata/llm"
)

// send sends r through next, retrying as llm.Limits documents. Every
// attempt runs in its own context, which the idle timer cancels; the answer
// returned to the SDK carries a body that keeps watching for silence and
// releases that context when closed. A request is only retried before its
// answer is handed to the SDK, so a streamed answer is never sent twice.
func (l *Limiter) send(r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	c, _ := r.Context().Value(callKey{}).(*call)
	getBody := func() (io.ReadCloser, error) { return r.Body, nil }
	if l.retries > 0 {
		var err error
		if getBody, err = rewindable(r); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancelCause(r.Context())
		ar := r.Clone(ctx)
		body, err := getBody()
		if err != nil {
			cancel(nil)
			return nil, fmt.Errorf("%s: rewinding the request body for retry %d: %w", l.provider, attempt, err)
		}
		ar.Body = body
		t0 := time.Now()
		resp, err := l.attempt(ar, cancel, c, next)
		logAttempt(l.provider, ar, attempt, resp, err, time.Since(t0))
		last := attempt >= l.retries
		var delay time.Duration
		if err != nil {
			cancel(nil)
			var le *llm.LimitError
			if last || r.Context().Err() != nil || asLimit(err, &le) {
				return nil, err
			}
			delay = l.backoffDelay(attempt)
		} else {
			retry, asked, named := l.retryable(resp, attempt)
			if !retry || last {
				resp.Body = l.watch(resp.Body, cancel, c)
				return resp, nil
			}
			if named && l.maxDelay >= 0 && asked > l.maxDelay {
				c.set(l.limitError(llm.ErrRetryDelayTooLong, l.maxDelay, roundWait(asked), "HTTP "+strconv.Itoa(resp.StatusCode)))
				resp.Body = l.watch(resp.Body, cancel, c)
				return resp, nil
			}
			delay = asked
			resp.Body.Close()
			cancel(nil)
		}
		if err := sleep(r.Context(), delay); err != nil {
			return nil, err
		}
	}
}

func asLimit(err error, le **llm.LimitError) bool {
	e, ok := err.(*llm.LimitError)
	*le = e
	return ok
}

// attempt sends one attempt, failing it with ErrStreamIdle when no response
// headers arrive within the idle timeout.
func (l *Limiter) attempt(r *http.Request, cancel context.CancelCauseFunc, c *call,
	next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if l.idle <= 0 {
		return next(r)
	}
	le := l.limitError(llm.ErrStreamIdle, l.idle, l.idle, "while waiting for the response headers")
	t := time.AfterFunc(l.idle, func() {
		c.set(le)
		cancel(le)
	})
	resp, err := next(r)
	if !t.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		return nil, le
	}
	return resp, err
}

// rewindable returns a function giving r's body anew for every attempt,
// reading it into memory once when r cannot give it again itself
// (r.GetBody is nil).
func rewindable(r *http.Request) (func() (io.ReadCloser, error), error) {
	switch {
	case r.Body == nil || r.Body == http.NoBody:
		return func() (io.ReadCloser, error) { return r.Body, nil }, nil
	case r.GetBody != nil:
		r.Body.Close() // every attempt sends a body from GetBody
		return r.GetBody, nil
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// retryable reports whether resp may be retried and the wait before the
// retry: the one the server names (named; retry-after-ms, retry-after, or
// the body via BodyRetryDelay), else the backoff. An x-should-retry header
// of an error answer overrides its status.
func (l *Limiter) retryable(resp *http.Response, attempt int) (retry bool, delay time.Duration, named bool) {
	st := resp.StatusCode
	switch {
	case st < 400:
		return false, 0, false
	case resp.Header.Get("x-should-retry") == "true":
	case resp.Header.Get("x-should-retry") == "false":
		return false, 0, false
	case st != http.StatusRequestTimeout && st != http.StatusConflict && st != http.StatusTooManyRequests && st < 500:
		return false, 0, false
	}
	if d, ok := RetryAfter(resp.Header, time.Now()); ok {
		return true, d, true
	}
	if l.bodyDelay != nil {
		head, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		if d, ok := l.bodyDelay(head); ok && err == nil {
			return true, d, true
		}
	}
	return true, l.backoffDelay(attempt), false
}

type readCloser struct {
	io.Reader
	io.Closer
}

// backoffDelay is the wait before retry n+1 when the server names none:
// the backoff, at most the max retry delay.
func (l *Limiter) backoffDelay(n int) time.Duration {
	d := l.backoff(n)
	if l.maxDelay >= 0 {
		d = min(d, l.maxDelay)
	}
	return d
}

// backoff is the Stainless SDKs' wait before retry n+1: 0.5 s × 2^n, at
// most 8 s, less up to 25 % jitter.
func backoff(n int) time.Duration {
	d := min(time.Duration(float64(500*time.Millisecond)*math.Pow(2, float64(n))), 8*time.Second)
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// roundWait rounds a wait named in a message up to the millisecond (so a
// wait just over a limit never reads as equal to it).
func roundWait(d time.Duration) time.Duration {
	if d > math.MaxInt64-time.Millisecond {
		return d
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// sleep waits d, or returns ctx's error when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryAfter reads the wait a response asks for before a retry:
// retry-after-ms (milliseconds, sent by the Anthropic and OpenAI APIs)
// first, then retry-after (RFC 9110 §10.2.3: seconds, or an HTTP date,
// measured from now). ok is false when neither header holds a number or a
// date; a negative or past value is 0, one too large for a time.Duration is
// its maximum.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	for _, hd := range []struct {
		name string
		unit time.Duration
	}{{"retry-after-ms", time.Millisecond}, {"retry-after", time.Second}} {
		v := strings.TrimSpace(h.Get(hd.name))
		if v == "" {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) {
			return scale(f, hd.unit), true
		}
		if hd.unit == time.Second {
			if t, err := http.ParseTime(v); err == nil {
				return max(t.Sub(now), 0), true
			}
		}
	}
	return 0, false
}

func scale(f float64, unit time.Duration) time.Duration {
	switch v := f * float64(unit); {
	case v <= 0:
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	default:
		return time.Duration(v)
	}
}

// watch wraps the body handed to the SDK: while a Read waits longer than
// the idle timeout, the attempt is cancelled and the Read fails with
// ErrStreamIdle; Close releases the attempt's context.
func (l *Limiter) watch(rc io.ReadCloser, cancel context.CancelCauseFunc, c *call) io.ReadCloser {
	b := &watchedBody{rc: rc, cancel: cancel, l: l, c: c}
	if l.idle > 0 {
		b.timer = time.AfterFunc(l.idle, b.fire)
		b.timer.Stop()
	}
	return b
}

type watchedBody struct {
	rc     io.ReadCloser
	cancel context.CancelCauseFunc
	l      *Limiter
	c      *call
	timer  *time.Timer // nil = no idle timeout
	read   atomic.Int64
	fired  atomic.Pointer[llm.LimitError]
}

// Read reads from the answer, timing the wait.
func (b *watchedBody) Read(p []byte) (int, error) {
	if b.timer != nil {
		b.timer.Reset(b.l.idle)
	}
	n, err := b.rc.Read(p)
	if b.timer != nil {
		b.timer.Stop()
	}
	total := b.read.Add(int64(n))
	if le := b.fired.Load(); le != nil && err != nil {
		return n, le
	}
	if max := b.l.maxBody; max > 0 && total > max {
		le := &llm.LimitError{Provider: b.l.provider, Kind: llm.ErrResponseTooLarge, LimitBytes: max,
			Detail: fmt.Sprintf("after %d bytes of the response", total)}
		b.c.set(le)
		return 0, le // the bytes past the cap are dropped with the rest
	}
	return n, err
}

func (b *watchedBody) fire() {
	le := b.l.limitError(llm.ErrStreamIdle, b.l.idle, b.l.idle, fmt.Sprintf("after %d bytes of the response", b.read.Load()))
	b.fired.Store(le)
	b.c.set(le)
	b.cancel(le)
}

// Close stops the timer, closes the answer and releases its context.
func (b *watchedBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// logAttempt logs one HTTP attempt at debug level on slog's default logger
// (strata --verbose shows it): provider, method, URL without its query,
// attempt number (0 = first), status or error, and the time to the response
// headers. Headers and bodies are never logged: they carry keys and prompts.
func logAttempt(provider string, r *http.Request, attempt int, resp *http.Response, err error, took time.Duration) {
	u := *r.URL
	u.RawQuery, u.User = "", nil
	attrs := []any{"provider", provider, "method", r.Method, "url", u.String(), "attempt", attempt, "took", took.Round(time.Millisecond)}
	if err != nil {
		slog.Debug("http request failed", append(attrs, "err", err)...)
		return
	}
	slog.Debug("http request", append(attrs, "status", resp.StatusCode)...)
}
