package tool

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func run(t *testing.T, tl Tool, input string) (string, error) {
	t.Helper()
	r := NewRegistry(tl)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	res, err := tl.Run(context.Background(), &Env{}, json.RawMessage(input))
	if err != nil {
		return "", err
	}
	return res.Content[0].Text, nil
}

// web_fetch (a kiro built-in the kiro CLI lists beside web_search) fetched
// from a loopback server: HTML comes back as text, the size limit cuts the
// body with a note, a server that never answers hits the time limit, and
// non-2xx, binary and non-http inputs are errors naming the problem.
func TestWebFetchLimits(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>Hello   <b>world</b></p></body></html>`))
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(strings.Repeat("a", 1000)))
		case "/slow":
			w.Header().Set("Content-Type", "text/plain")
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/img":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G'})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	wf := &WebFetch{Timeout: 200 * time.Millisecond, AllowPrivate: true} // the test server is on 127.0.0.1
	tests := []struct {
		name, input, want, wantErr string
	}{
		{"html becomes text", `{"url":"` + srv.URL + `/page"}`, "Title\nHello world", ""},
		{"max_bytes cuts the body", `{"url":"` + srv.URL + `/big","max_bytes":10}`, "aaaaaaaaaa\n\n[cut: only the first 10 bytes of the response were read]", ""},
		{"time limit", `{"url":"` + srv.URL + `/slow"}`, "", "within 200ms"},
		{"status", `{"url":"` + srv.URL + `/missing"}`, "", "HTTP status: 404 Not Found"},
		{"binary refused", `{"url":"` + srv.URL + `/img"}`, "", `content type "image/png" is not text`},
		{"scheme", `{"url":"file:///etc/passwd"}`, "", "want an absolute http:// or https:// URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := run(t, wf, tc.input)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v (%q)", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(got, tc.want) {
				t.Errorf("got %q, want it to end with %q", got, tc.want)
			}
		})
	}
}

// thinking records a thought and changes nothing; an empty one is refused.
func TestThinking(t *testing.T) {
	if got, err := run(t, Thinking{}, `{"thought":"first build, then bundle"}`); err != nil || !strings.Contains(got, "Thought recorded") {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := run(t, Thinking{}, `{"thought":"  "}`); err == nil {
		t.Error("an empty thought must be an error")
	}
}

// introspect returns its Answer for the query and fails clearly without one.
func TestIntrospect(t *testing.T) {
	var asked string
	in := &Introspect{Answer: func(_ context.Context, q string) (string, error) { asked = q; return "docs for " + q, nil }}
	if got, err := run(t, in, `{"query":"layouts"}`); err != nil || got != "docs for layouts" || asked != "layouts" {
		t.Errorf("got %q, %v (asked %q)", got, err, asked)
	}
	if _, err := run(t, &Introspect{}, `{}`); err == nil || !strings.Contains(err.Error(), "no documentation source") {
		t.Errorf("want a configuration error, got %v", err)
	}
}

type fakeIndex struct{ query, ref string }

func (f *fakeIndex) Show() string { return "context_id: abc" }
func (f *fakeIndex) SearchText(_ context.Context, q, ref string) (string, error) {
	f.query, f.ref = q, ref
	if ref == "nope" {
		return "", errors.New("unknown context")
	}
	return "1. hit", nil
}

// knowledge dispatches show and search to the index and says why kiro's
// store-editing commands are unavailable.
func TestKnowledgeCommands(t *testing.T) {
	idx := &fakeIndex{}
	k := &Knowledge{Index: idx}
	if got, err := run(t, k, `{"command":"show"}`); err != nil || got != "context_id: abc" {
		t.Errorf("show: %q %v", got, err)
	}
	if got, err := run(t, k, `{"command":"search","query":"retry policy","context_id":"abc"}`); err != nil || got != "1. hit" || idx.query != "retry policy" || idx.ref != "abc" {
		t.Errorf("search: %q %v %+v", got, err, idx)
	}
	if _, err := run(t, k, `{"command":"search"}`); err == nil || !strings.Contains(err.Error(), `needs "query"`) {
		t.Errorf("search without query: %v", err)
	}
	if _, err := run(t, k, `{"command":"add","name":"x","value":"y"}`); err == nil || !strings.Contains(err.Error(), "knowledgeBase resources") {
		t.Errorf("add: %v", err)
	}
	if _, err := run(t, &Knowledge{}, `{"command":"show"}`); err == nil || !strings.Contains(err.Error(), "no knowledge bases") {
		t.Errorf("no index: %v", err)
	}
}
