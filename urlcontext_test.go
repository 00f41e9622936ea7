package strata_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
)

// The tiered-assembly design's URL context: "The following content was
// fetched from URLs mentioned in the conversation", "Each URL formatted as
// title + content + optional symbol map", joined with "\n---\n". URLs the
// user's prompt mentions are fetched (once), after the --url ones; a
// source file's URL carries its symbol map.
func TestURLsMentionedInThePromptAreFetchedWithSymbolMaps(t *testing.T) {
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[r.URL.Path]++
		switch r.URL.Path {
		case "/guide":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<title>Style guide</title><p>Use tabs.</p>"))
		case "/lib/shapes.py":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("class Circle:\n    def area(self):\n        return 3\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	prompt := "Port " + srv.URL + "/lib/shapes.py to Go, following " + srv.URL + "/guide."
	// A URL in a message is fetched as web_fetch fetches: this loopback one
	// only when private addresses are allowed (docs/security.md).
	closed := openWorkspace(t, strata.Options{Dir: workspaceDir(t), Agent: "dev", ProviderName: "anthropic", Layout: "tiered"})
	if _, err := closed.Render(context.Background(), strata.RenderOptions{Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	if hits["/lib/shapes.py"] != 0 {
		t.Fatal("a loopback URL in the prompt was fetched without WebFetchAllowPrivate")
	}
	ws := openWorkspace(t, strata.Options{Dir: workspaceDir(t), Agent: "dev", ProviderName: "anthropic", Layout: "tiered",
		URLs: []string{srv.URL + "/guide"}, WebFetchAllowPrivate: true})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(userTexts(r), "\n\x00\n")
	want := "# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n" +
		"## Style guide\n" + srv.URL + "/guide\n\nUse tabs." +
		"\n---\n" +
		"## " + srv.URL + "/lib/shapes.py\n" + srv.URL + "/lib/shapes.py\n\nclass Circle:\n    def area(self):\n        return 3" +
		"\n\n### Symbols\n" + srv.URL + "/lib/shapes.py:\n  c Circle:1\n    m area(self):2"
	if !strings.Contains(all, want) {
		t.Errorf("URL context:\n%s\nwant it to contain\n%s", all, want)
	}
	if _, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	if hits["/guide"] != 1 {
		t.Errorf("the --url URL mentioned in the prompt was fetched %d times, want once", hits["/guide"])
	}
}
