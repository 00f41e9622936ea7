package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// --url and --reminder reach the tiered layout's request; with a layout
// that does not place URL or review context, --url and --review exit 2.
func TestRenderContextFlags(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Release notes: v2 removes Foo."))
	}))
	defer srv.Close()
	dir := t.TempDir()
	r := runCLI(t, dir, nil, "render", "--layout", "tiered", "--url", srv.URL+"/notes", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n`,
		`Release notes: v2 removes Foo.`, `Ok, I've reviewed the URL content.`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("body lacks %s:\n%s", want, r.stdout)
		}
	}
	for _, args := range [][]string{{"--url", srv.URL}, {"--review", "HEAD"}} {
		r := runCLI(t, dir, nil, append([]string{"render", "--layout", "cachefit"}, append(args, "hi")...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "use --layout tiered") {
			t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
}
