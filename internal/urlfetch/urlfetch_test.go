package urlfetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestFetchHTMLGivesTitleAndVisibleText(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><title> API guide </title><style>p{}</style></head>` +
			`<body><h1>Usage</h1><p>Call <code>Run</code> first.</p><script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>`))
	})
	d, err := (&Fetcher{AllowPrivate: true}).Fetch(context.Background(), s.URL+"/guide")
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "API guide" || d.URL != s.URL+"/guide" {
		t.Errorf("title %q url %q", d.Title, d.URL)
	}
	if d.Content != "Usage\nCall Run first.\none\ntwo" {
		t.Errorf("content %q", d.Content)
	}
}

func TestFetchCutsAtMaxBytes(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("x", 100)))
	})
	d, err := (&Fetcher{MaxBytes: 10, AllowPrivate: true}).Fetch(context.Background(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Content, "xxxxxxxxxx\n\n[cut: only the first 10 bytes") {
		t.Errorf("content %q", d.Content)
	}
}

func TestFetchErrors(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G'})
		case "/slow":
			select { // never answers before the client gives up
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	cases := []struct {
		name, url string
		f         Fetcher
		check     func(error) bool
	}{
		{"status", s.URL + "/missing", Fetcher{AllowPrivate: true}, func(err error) bool { return errors.Is(err, ErrStatus) }},
		{"binary", s.URL + "/image", Fetcher{AllowPrivate: true}, func(err error) bool { return strings.Contains(err.Error(), `"image/png" is not text`) }},
		{"timeout", s.URL + "/slow", Fetcher{Timeout: time.Millisecond, AllowPrivate: true}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"scheme", "file:///etc/passwd", Fetcher{}, func(err error) bool { return strings.Contains(err.Error(), "want an absolute http") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.Fetch(context.Background(), tc.url)
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), tc.url) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// web_fetch as a way into the network strata runs in (issue 23): by
// default a fetch refuses loopback — by IP and by a name that resolves to
// it (the check runs on the address dialled, after DNS) — and a redirect
// from an allowed server to a cloud metadata address is refused at its own
// dial, even with AllowPrivate. The metadata address is never contacted:
// the dial is refused before connect(2). All of these used to be fetched.
func TestAttackFetchRefusesInternalAddresses(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	for _, c := range []struct {
		name, url string
		f         Fetcher
		kind      string
	}{
		{"loopback", s.URL, Fetcher{}, "loopback"},
		{"name resolving to loopback", "http://localhost" + port, Fetcher{}, "loopback"},
		{"redirect to metadata", s.URL, Fetcher{AllowPrivate: true}, "link-local"},
		{"metadata", "http://169.254.169.254/", Fetcher{AllowPrivate: true}, "link-local"},
		{"IPv6 metadata", "http://[fd00:ec2::254]/", Fetcher{AllowPrivate: true}, "link-local"},
		{"unspecified", "http://0.0.0.0" + port, Fetcher{AllowPrivate: true}, "unspecified"},
		{"private", "http://10.1.2.3/", Fetcher{}, "private"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.f.Fetch(context.Background(), c.url)
			if !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), c.kind) {
				t.Errorf("Fetch(%s) = %v; want ErrAddress (%s)", c.url, err, c.kind)
			}
		})
	}
}
