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
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
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

// ErrAddress is matched (errors.Is) by Fetch's error for a connection the
// address policy refuses (see Fetcher).
var ErrAddress = errors.New("urlfetch: address refused")

// Fetcher fetches URLs. The zero value uses a client of its own and the
// default limits, and refuses private addresses. Safe for concurrent use.
//
// Addresses: with Client nil, every connection — the first and each
// redirect's — is checked on the IP address actually dialled, after DNS
// resolution (net.Dialer.Control), so a name that resolves, or later
// re-resolves, to an internal address is refused as well. Link-local
// addresses, cloud metadata endpoints among them (169.254.0.0/16,
// fe80::/10, fd00:ec2::254), multicast and the unspecified address are
// always refused; loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12,
// 192.168/16, fc00::/7) and shared (100.64/10) addresses unless
// AllowPrivate. No proxy is used then (the proxy's address would be
// checked, not the target's). A non-nil Client is used as given: its
// transport decides.
type Fetcher struct {
	Client   *http.Client  // nil = a client with the address check
	MaxBytes int64         // 0 = DefaultMaxBytes
	Timeout  time.Duration // 0 = DefaultTimeout
	// AllowPrivate lets the fetch reach loopback and private addresses
	// (web_fetch: strata.Options.WebFetchAllowPrivate; the URLs a person
	// gives on the command line).
	AllowPrivate bool
}

// metadataV6 is AWS's IPv6 instance metadata endpoint, inside fc00::/7.
var (
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
	sharedV4   = netip.MustParsePrefix("100.64.0.0/10")
)

// CheckAddress returns nil when ip may be connected to: an error matching
// ErrAddress naming the address and its kind otherwise (see Fetcher).
func CheckAddress(ip netip.Addr, allowPrivate bool) error {
	ip = ip.Unmap()
	kind := ""
	switch {
	case ip == metadataV6 || ip.IsLinkLocalUnicast():
		kind = "link-local (cloud metadata endpoints live there)"
	case ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		kind = "multicast"
	case ip.IsUnspecified():
		kind = "unspecified (it reaches this machine)"
	case allowPrivate:
	case ip.IsLoopback():
		kind = "loopback"
	case ip.IsPrivate() || sharedV4.Contains(ip):
		kind = "private"
	}
	if kind == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is a %s address", ErrAddress, ip, kind)
}

// client is f.Client, or a client whose every dial passes CheckAddress.
func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrAddress, address, err)
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("%w: %s is not an IP address", ErrAddress, host)
			}
			return CheckAddress(ip, f.AllowPrivate)
		}}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy, t.DialContext = nil, d.DialContext
	return &http.Client{Transport: t}
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
	client := f.client()
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
