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
	d, err := (&Fetcher{}).Fetch(context.Background(), s.URL+"/guide")
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
	d, err := (&Fetcher{MaxBytes: 10}).Fetch(context.Background(), s.URL)
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
		{"status", s.URL + "/missing", Fetcher{}, func(err error) bool { return errors.Is(err, ErrStatus) }},
		{"binary", s.URL + "/image", Fetcher{}, func(err error) bool { return strings.Contains(err.Error(), `"image/png" is not text`) }},
		{"timeout", s.URL + "/slow", Fetcher{Timeout: time.Millisecond}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
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
