package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/strata-agent/strata/internal/urlfetch"
	"github.com/strata-agent/strata/llm"
)

//go:embed web_fetch.md
var webFetchDescription string

// Limits of web_fetch.
const (
	// WebFetchMaxBytes is the most body bytes web_fetch reads and returns
	// (the max_bytes input may only lower it).
	WebFetchMaxBytes = 256 << 10
	// WebFetchTimeout bounds one fetch, redirects included, when
	// WebFetch.Timeout is 0.
	WebFetchTimeout = 30 * time.Second
)

// WebFetch is kiro's web_fetch tool (strata's own input schema
// specs/web_fetch.json; kiro publishes none): an HTTP GET of one http:// or
// https:// URL. The body is read up to WebFetchMaxBytes (or the call's
// max_bytes) and the rest is dropped with a note; the whole fetch is
// bounded by Timeout. HTML is returned as its text (scripts and styles
// left out); other text types (text/*, JSON, XML) as they are; binary
// bodies are refused. A status other than 2xx is an error naming it. The
// zero value is ready to use; it is safe for concurrent use.
//
// web_fetch reaches the network: it is not read-only and, in allowlist
// mode, runs only when the agent's allowedTools names it or the user
// approves it. It refuses link-local and cloud metadata addresses always,
// and loopback and private ones unless AllowPrivate, checked on every
// address dialled, redirects included (urlfetch.Fetcher).
type WebFetch struct {
	// Client sends the request (nil = a client with no cookies that
	// follows at most 10 redirects and checks every address it dials; a
	// Client given here is used as is, without that check).
	Client *http.Client
	// AllowPrivate lets the fetch reach loopback and private addresses
	// (strata.Options.WebFetchAllowPrivate).
	AllowPrivate bool
	// Timeout bounds one fetch (0 = WebFetchTimeout).
	Timeout time.Duration
}

// Spec returns web_fetch's spec: specs/web_fetch.json, web_fetch.md as
// description.
func (*WebFetch) Spec() llm.ToolSpec { return cachedSpec("web_fetch", webFetchDescription) }

// Run fetches the URL through urlfetch (the same fetch as the tiered
// layout's URL context) with web_fetch's limits.
func (w *WebFetch) Run(ctx context.Context, _ *Env, input json.RawMessage) (Result, error) {
	var in struct {
		URL      string `json:"url"`
		MaxBytes int    `json:"max_bytes"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("web_fetch: input: %w", err)
	}
	limit := WebFetchMaxBytes
	if in.MaxBytes > 0 && in.MaxBytes < limit {
		limit = in.MaxBytes
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = WebFetchTimeout
	}
	f := urlfetch.Fetcher{Client: w.Client, MaxBytes: int64(limit), Timeout: timeout, AllowPrivate: w.AllowPrivate}
	d, err := f.Fetch(ctx, in.URL)
	if err != nil {
		return Result{}, fmt.Errorf("web_fetch: %w", err)
	}
	return TextResult(fmt.Sprintf("URL: %s\nContent-Type: %s\n\n%s", d.Final, d.MediaType, d.Content)), nil
}
