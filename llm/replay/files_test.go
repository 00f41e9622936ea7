package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// TestCassettesLoad loads every HTTP cassette of the wire fixtures and checks
// each interaction has a method, a URL, a status and, for POSTs, a JSON body.
func TestCassettesLoad(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	var files []string
	for _, pat := range []string{"pydantic-ai/cassettes/*/*.yaml", "anthropic-sdk-go/toolrunner/testdata/cassettes/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(wire, pat))
		files = append(files, m...)
	}
	filepath.WalkDir(filepath.Join(wire, "anthropic-sdk-python"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(p, "__inline_snapshot__") && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 100 {
		t.Fatalf("found only %d cassettes under %s", len(files), wire)
	}
	for _, f := range files {
		ins, err := Cassette(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(ins) == 0 {
			t.Errorf("%s: no interactions", f)
		}
		for i, in := range ins {
			if in.Request.Method == "" || in.Request.Path == "" || in.Response.Status == 0 {
				t.Errorf("%s #%d: method=%q url=%q status=%d", f, i, in.Request.Method, in.Request.Path, in.Response.Status)
			}
			// Uploads (multipart, plain text) are real too; only JSON bodies must parse.
			// (Google's resumable upload declares JSON but sends the file text.)
			isJSON := strings.Contains(in.Request.Header.Get("Content-Type"), "json") && !strings.Contains(in.Request.Path, "/upload/")
			if isJSON && len(in.Request.Body) > 0 && !json.Valid(in.Request.Body) {
				t.Errorf("%s #%d: request body is not JSON: %.100s", f, i, in.Request.Body)
			}
		}
	}
}

// TestChunksReframe re-frames a real Anthropic multi-stream chunk file and a
// Chat Completions chunk file and serves them: the bytes on the wire are SSE
// events whose data lines are the original chunk lines.
func TestChunksReframe(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	multi := filepath.Join(wire, "vercel-ai/anthropic/anthropic-programmatic-tool-calling.1.chunks.txt")
	rs, err := ChunksFile(multi)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 15 {
		t.Fatalf("%s: got %d streams, INDEX.md says 15", multi, len(rs))
	}
	for i, r := range rs {
		if !bytes.HasPrefix(r.Body, []byte("event: message_start\ndata: {")) || !bytes.Contains(r.Body, []byte("event: message_stop\n")) {
			t.Errorf("stream %d is not a framed message_start…message_stop stream: %.80q", i, r.Body)
		}
	}
	chat, _ := filepath.Glob(filepath.Join(wire, "vercel-ai/deepseek/chat/*.chunks.txt"))
	if len(chat) == 0 {
		t.Fatal("no deepseek chunk files")
	}
	rs, err = ChunksFile(chat[0])
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(rs...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("content-type %q", ct)
	}
	raw, _ := os.ReadFile(chat[0])
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		lines = append(lines, "data: "+strings.TrimSpace(l)+"\n\n")
	}
	want := strings.Join(lines, "") + "data: [DONE]\n\n"
	if string(got) != want {
		t.Errorf("served body differs from the re-framed chunk file")
	}
	if srv.Remaining() != 0 || len(srv.Received()) != 1 {
		t.Errorf("remaining=%d received=%d", srv.Remaining(), len(srv.Received()))
	}
	// Exhausted script: a clear 500.
	resp, err = http.Post(srv.URL()+"/v1/chat/completions", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 {
		t.Errorf("exhausted script status %d, want 500", resp.StatusCode)
	}
	resp.Body.Close()
}

// TestCutAfter checks a cut response ends the connection mid-body.
func TestCutAfter(t *testing.T) {
	body := []byte("event: a\ndata: {}\n\nevent: b\ndata: {}\n\n")
	srv, err := NewServer(Response{Body: body, CutAfter: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Errorf("read of a cut stream succeeded with %q; want an unexpected EOF", got)
	}
	if !bytes.Equal(got, body[:20]) {
		t.Errorf("got %q, want the first 20 bytes", got)
	}
}
