package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

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
// approves it. It does not refuse private or loopback addresses.
type WebFetch struct {
	// Client sends the request (nil = a client with no cookies that
	// follows at most 10 redirects, http.Client's default).
	Client *http.Client
	// Timeout bounds one fetch (0 = WebFetchTimeout).
	Timeout time.Duration
}

// Spec returns web_fetch's spec: specs/web_fetch.json, web_fetch.md as
// description.
func (*WebFetch) Spec() llm.ToolSpec { return cachedSpec("web_fetch", webFetchDescription) }

// Run fetches the URL.
func (w *WebFetch) Run(ctx context.Context, _ *Env, input json.RawMessage) (Result, error) {
	var in struct {
		URL      string `json:"url"`
		MaxBytes int    `json:"max_bytes"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("web_fetch: input: %w", err)
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("web_fetch: url %q: want an absolute http:// or https:// URL", in.URL)
	}
	limit := WebFetchMaxBytes
	if in.MaxBytes > 0 && in.MaxBytes < limit {
		limit = in.MaxBytes
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = WebFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("web_fetch: %w", err)
	}
	req.Header.Set("User-Agent", "strata-web_fetch")
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Result{}, fmt.Errorf("web_fetch: %s: no complete answer within %s", u, timeout)
		}
		return Result{}, fmt.Errorf("web_fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Result{}, fmt.Errorf("web_fetch: %s: HTTP status %s", u, resp.Status)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !textual(mt) {
		return Result{}, fmt.Errorf("web_fetch: %s: content type %q is not text; only text, HTML, JSON and XML are returned", u, mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Result{}, fmt.Errorf("web_fetch: %s: body not read within %s", u, timeout)
		}
		return Result{}, fmt.Errorf("web_fetch: %s: read body: %w", u, err)
	}
	truncated := len(body) > limit
	if truncated {
		body = body[:limit]
	}
	text := string(body)
	if mt == "text/html" || mt == "application/xhtml+xml" {
		text = htmlText(text)
	}
	out := fmt.Sprintf("URL: %s\nContent-Type: %s\n\n%s", resp.Request.URL, mt, text)
	if truncated {
		out += fmt.Sprintf("\n\n[body truncated at %d bytes]", limit)
	}
	return TextResult(out), nil
}

// textual reports whether a media type is text web_fetch returns.
func textual(mt string) bool {
	return mt == "" || strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		mt == "application/xhtml+xml" || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// htmlText returns the text of an HTML document: text nodes outside
// script, style, noscript and template, whitespace collapsed, block
// elements on lines of their own.
func htmlText(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.StartTagToken, html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "noscript", "template":
				if tt == html.StartTagToken {
					skip++
				} else if skip > 0 {
					skip--
				}
			case "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre":
				if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
					b.WriteString("\n")
				}
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if t := strings.Join(strings.Fields(string(z.Text())), " "); t != "" {
				s := b.String()
				if len(s) > 0 && !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, " ") {
					b.WriteString(" ")
				}
				b.WriteString(t)
			}
		}
	}
}
