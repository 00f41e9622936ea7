// Package capture records the exact HTTP request an SDK would send, without
// sending it: a RoundTripper that keeps the request and answers with an error.
// `strata render` uses it to print the wire body the real SDK produces, not a
// second serialization of it.
package capture

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
)

// ErrNotSent is what the recording transport answers every request with.
var ErrNotSent = errors.New("capture: request recorded, not sent")

// Request is a recorded request.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Transport is an http.RoundTripper that records requests and sends nothing.
// Safe for concurrent use.
type Transport struct {
	mu   sync.Mutex
	reqs []Request
}

// RoundTrip records r (reading and closing its body) and returns ErrNotSent.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	t.mu.Lock()
	t.reqs = append(t.reqs, Request{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: bytes.Clone(body)})
	t.mu.Unlock()
	return nil, ErrNotSent
}

// Client returns an *http.Client that uses t.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// Requests returns the recorded requests in order.
func (t *Transport) Requests() []Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Request(nil), t.reqs...)
}
