// Package limit applies llm.Limits and strata's one retry policy (both
// documented on llm.Limits) to the HTTP traffic of a provider's SDK client.
//
// Each provider of this module builds one Limiter in New, turns its SDK's own
// retries off, hands the SDK the HTTP client Client (or, for the AWS SDK,
// Doer) returns, and runs every Stream call through Limiter.Call. The
// Limiter's transport then sends each request, retries it while no byte of
// the answer has reached the SDK, and watches the answer for silence; Call
// sets the request deadline and turns whatever the SDK reports after a limit
// fired into that limit's *llm.LimitError.
package limit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/strata-agent/strata/llm"
)

// Options configure New.
type Options struct {
	Provider   string     // provider id named by errors, e.g. "anthropic"
	Limits     llm.Limits // the zero value applies llm's defaults
	MaxRetries int        // retries after the first attempt; ≤ 0 = none
	// Streaming says the provider streams its answers: the stream idle
	// timeout applies only then (a non-streaming answer starts once it is
	// complete).
	Streaming bool
	// BodyRetryDelay, when set, reads the retry delay a retryable error
	// answer names in its body (Gemini's google.rpc.RetryInfo), for answers
	// without retry-after headers. It gets at most 64 KiB of the body.
	BodyRetryDelay func(body []byte) (time.Duration, bool)
}

// Limiter applies one provider's limits and retries. It is safe for
// concurrent use.
type Limiter struct {
	provider  string
	idle      time.Duration // 0 = no idle timeout
	maxDelay  time.Duration // < 0 = no cap
	timeout   time.Duration // 0 = no request deadline
	maxBody   int64         // 0 = no cap on the bytes of an answer
	retries   int
	bodyDelay func([]byte) (time.Duration, bool)
	backoff   func(retry int) time.Duration // wait before retry n+1 when the server names none
}

// New returns a Limiter for o, with llm.Limits' defaults applied.
func New(o Options) *Limiter {
	l := &Limiter{provider: o.Provider, retries: max(o.MaxRetries, 0), bodyDelay: o.BodyRetryDelay, backoff: backoff,
		idle: o.Limits.StreamIdleTimeout, maxDelay: o.Limits.MaxRetryDelay, timeout: max(o.Limits.RequestTimeout, 0)}
	switch {
	case !o.Streaming || l.idle < 0:
		l.idle = 0
	case l.idle == 0:
		l.idle = llm.DefaultStreamIdleTimeout
	}
	switch {
	case o.Limits.MaxResponseBytes == 0:
		l.maxBody = llm.DefaultMaxResponseBytes
	case o.Limits.MaxResponseBytes > 0:
		l.maxBody = o.Limits.MaxResponseBytes
	}
	switch {
	case l.maxDelay == 0:
		l.maxDelay = llm.DefaultMaxRetryDelay
	case l.maxDelay < 0:
		l.maxDelay = -1
	}
	return l
}

// call is the state of one Call, found by the transport in the request's
// context: the first limit that fired.
type call struct {
	mu  sync.Mutex
	err *llm.LimitError
}

type callKey struct{}

// set records e unless a limit fired before; c may be nil (a request sent
// outside Call).
func (c *call) set(e *llm.LimitError) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = e
	}
}

func (c *call) get() *llm.LimitError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call runs fn, one Stream call of the provider, with ctx bounded by
// Limits.RequestTimeout. When fn fails and the caller's ctx is not done,
// the first limit that fired during the call is returned as an
// *llm.LimitError (for ErrRetryDelayTooLong with fn's error, usually the
// provider's *llm.APIError, as its Err); otherwise fn's result is returned
// as is.
func (l *Limiter) Call(ctx context.Context, fn func(context.Context) (*llm.Response, error)) (*llm.Response, error) {
	c := &call{}
	ctx = context.WithValue(ctx, callKey{}, c)
	inner := ctx
	if l.timeout > 0 {
		var cancel context.CancelFunc
		inner, cancel = context.WithTimeoutCause(ctx, l.timeout, l.limitError(llm.ErrRequestTimeout, l.timeout, l.timeout, ""))
		defer cancel()
	}
	resp, err := fn(inner)
	if err == nil || ctx.Err() != nil {
		return resp, err
	}
	if le := c.get(); le != nil {
		if le.Kind == llm.ErrRetryDelayTooLong {
			withErr := *le
			withErr.Err = err
			return nil, &withErr
		}
		return nil, le
	}
	var le *llm.LimitError
	if inner.Err() != nil && errors.As(context.Cause(inner), &le) {
		return nil, le
	}
	return nil, err
}

func (l *Limiter) limitError(kind error, limit, wait time.Duration, detail string) *llm.LimitError {
	return &llm.LimitError{Provider: l.provider, Kind: kind, Limit: limit, Wait: wait, Detail: detail}
}

// Doer is the client interface of the AWS SDK (aws.HTTPClient): one method
// sending a request.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Doer returns next with the Limiter's retries and idle timeout applied.
func (l *Limiter) Doer(next Doer) Doer { return doer{l, next} }

type doer struct {
	l    *Limiter
	next Doer
}

func (d doer) Do(r *http.Request) (*http.Response, error) { return d.l.send(r, d.next.Do) }

// Client returns a copy of base (nil = a client with http.DefaultTransport)
// whose transport applies the Limiter's retries and idle timeout.
func (l *Limiter) Client(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = roundTripper{l, next}
	return c
}

type roundTripper struct {
	l    *Limiter
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.l.send(r, t.next.RoundTrip)
}
