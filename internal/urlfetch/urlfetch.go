// Package urlfetch fetches URLs as text for the URL context of the
// tiered-assembly design (docs/tiered.md, rule 4) and for kiro's web_fetch
// tool (tool.WebFetch): each response is
// read up to a size limit within a time limit, and HTML is reduced to its
// title and visible text with golang.org/x/net/html.
package urlfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Limits of one fetch.
const (
	DefaultMaxBytes = 256 << 10        // bytes of body read; the rest is cut with a note
	DefaultTimeout  = 15 * time.Second // whole request, headers and body
)

// ErrStatus is wrapped by Fetch for a response whose status is not 2xx.
var ErrStatus = errors.New("urlfetch: unexpected HTTP status")

// Doc is one fetched URL as text.
type Doc struct {
	URL       string // the URL asked for
	Final     string // the URL answered, after redirects
	MediaType string // the response's media type ("" when it sent none)
	Title     string // the HTML <title>, else the URL asked for
	// Content is the text: HTML reduced to its visible text, other text
	// types as sent; a cut body ends with a note saying how much was read.
	Content string
}

// Fetcher fetches URLs. The zero value uses http.DefaultClient and the
// default limits. Safe for concurrent use.
type Fetcher struct {
	Client   *http.Client  // nil = http.DefaultClient
	MaxBytes int64         // 0 = DefaultMaxBytes
	Timeout  time.Duration // 0 = DefaultTimeout
}

// Fetch GETs raw (an http or https URL) and returns it as a Doc:
// the HTML <title> (else the URL) and the text (HTML reduced to its visible
// text; text/* and JSON as sent). A body longer than MaxBytes is cut and
// ends with a note saying so. Errors name the URL: a malformed URL or other
// scheme, a transport error or timeout, ErrStatus for a non-2xx status, and
// a binary content type (images, archives) that cannot be shown as text.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (Doc, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Doc{}, fmt.Errorf("url %q: want an absolute http:// or https:// URL", raw)
	}
	timeout, max := f.Timeout, f.MaxBytes
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if max <= 0 {
		max = DefaultMaxBytes
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return Doc{}, fmt.Errorf("url %s: %w", raw, err)
	}
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Doc{}, fmt.Errorf("fetch %s: no complete answer within %s: %w", raw, timeout, err)
		}
		return Doc{}, fmt.Errorf("fetch %s (limit %s): %w", raw, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Doc{}, fmt.Errorf("fetch %s: %w: %s", raw, ErrStatus, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Doc{}, fmt.Errorf("fetch %s: body not read within %s: %w", raw, timeout, err)
		}
		return Doc{}, fmt.Errorf("fetch %s (limit %s): read body: %w", raw, timeout, err)
	}
	cut := int64(len(body)) > max
	if cut {
		body = body[:max]
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	doc := Doc{URL: raw, Final: resp.Request.URL.String(), MediaType: mt, Title: raw}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		title, text := htmlText(string(body))
		if title != "" {
			doc.Title = title
		}
		doc.Content = text
	case mt == "" || strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "json") || strings.HasSuffix(mt, "xml"):
		doc.Content = strings.ToValidUTF8(string(body), "\uFFFD")
	default:
		return Doc{}, fmt.Errorf("fetch %s: content type %q is not text; only text, HTML, JSON and XML are returned", raw, mt)
	}
	if cut {
		doc.Content += fmt.Sprintf("\n\n[cut: only the first %d bytes of the response were read]", max)
	}
	return doc, nil
}

// skipped are HTML elements whose text is not shown.
var skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "title": true, "svg": true}

// blocks are HTML elements that end a line of text.
var blocks = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "pre": true, "section": true, "article": true, "table": true, "ul": true, "ol": true}

// htmlText returns the document's <title> and its visible text, one line
// per block element, blank runs collapsed.
func htmlText(src string) (title, text string) {
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", src
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "title" && title == "" && n.FirstChild != nil {
			title = strings.TrimSpace(n.FirstChild.Data)
		}
		if n.Type == html.ElementNode && skipped[n.Data] {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && blocks[n.Data] {
			b.WriteString("\n")
		}
	}
	walk(root)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return title, strings.Join(lines, "\n")
}
