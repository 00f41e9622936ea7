package openai

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm/replay"
)

// family is the wire API of a fixture.
type family string

const (
	famChat      family = "chat"
	famResponses family = "responses"
)

// wireRows returns every INDEX.md row whose API is Chat Completions (incl.
// "OpenAI-compatible Chat") or Responses (OpenAI and compatible servers).
// "OpenAI legacy Completions" (/v1/completions) is not an API strata
// speaks and is left out.
func wireRows(t testing.TB) (string, []shared.WireRow) {
	t.Helper()
	wire, rows := shared.WireIndex(t, func(r shared.WireRow) bool {
		return strings.Contains(r.API, "Chat Completions") || strings.Contains(r.API, "OpenAI-compatible Chat") || strings.Contains(r.API, "Responses")
	})
	if len(rows) < 150 {
		t.Fatalf("INDEX.md lists only %d Chat/Responses fixtures; the table format changed?", len(rows))
	}
	return wire, rows
}

func rowFamily(r shared.WireRow) family {
	if strings.Contains(r.API, "Responses") {
		return famResponses
	}
	return famChat
}

// wireCase is one response to replay through a provider.
type wireCase struct {
	Name      string
	Family    family
	Resp      replay.Response
	Streaming bool   // SSE body: use the streaming endpoint
	Request   []byte // recorded request body, for cassettes
}

// fixtureExclusions names fixture files that are deliberately not replayed
// as a model response, and why. Every entry must match an INDEX.md row.
var fixtureExclusions = map[string]string{
	// INDEX.md "Known oddities": hand-written, lines 1 and 6 are not valid JSON
	// (the response object is never closed); cannot be served as a stream.
	"vercel-ai/openai/responses/parallel-tool-call-wrapper.1.chunks.txt": "hand-written; lines 1 and 6 are invalid JSON",
}

// interactionExclusion says why a cassette interaction is not a model call
// to replay (other endpoints: files, vector stores, conversations, model
// metadata, background-mode retrieval by GET), or "" to replay it.
func interactionExclusion(in replay.Interaction) string {
	u, err := url.Parse(in.Request.Path)
	if err != nil {
		return "unparsable URL"
	}
	p := strings.TrimSuffix(u.Path, "/")
	switch {
	case in.Request.Method != "POST":
		return in.Request.Method + " " + p + ": not a model call (other endpoint)"
	case strings.HasSuffix(p, "/chat/completions"), strings.HasSuffix(p, "/responses"):
		return ""
	}
	return "POST " + p + ": other endpoint (files/vector stores/conversations)"
}

// fixtureCases turns every row into replayable cases; excluded files and
// interactions are returned with their reasons.
func fixtureCases(t *testing.T) (cases []wireCase, excluded map[string]string, perFormat map[string]int) {
	wire, rows := wireRows(t)
	excluded = map[string]string{}
	perFormat = map[string]int{}
	seen := map[string]bool{}
	for _, r := range rows {
		path := filepath.Join(wire, r.Path)
		if why, ok := fixtureExclusions[r.Path]; ok {
			excluded[r.Path] = why
			seen[r.Path] = true
			continue
		}
		fam := rowFamily(r)
		switch {
		case strings.HasPrefix(r.Format, "raw SSE"):
			resp, err := replay.SSEFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, wireCase{Name: r.Path, Family: fam, Resp: resp, Streaming: true})
			perFormat["raw SSE"]++
		case strings.HasPrefix(r.Format, "JSON-lines"):
			rs, err := replay.ChunksFile(path)
			if err != nil {
				t.Fatalf("%s: %v (add it to fixtureExclusions with a reason if it cannot be served)", r.Path, err)
			}
			for i, resp := range rs {
				name := r.Path
				if len(rs) > 1 {
					name += "#" + itoa(i)
				}
				cases = append(cases, wireCase{Name: name, Family: fam, Resp: resp, Streaming: true})
			}
			perFormat["chunks"]++
		case strings.HasPrefix(r.Format, "full JSON"):
			status := 0
			if raw, _ := os.ReadFile(path); isErrorBody(raw) {
				// vercel-ai stores error bodies without their HTTP status;
				// serve them as 400 and expect that status back.
				status = 400
			}
			resp, err := replay.JSONFile(path, status)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, wireCase{Name: r.Path, Family: fam, Resp: resp})
			perFormat["full JSON"]++
		case strings.HasPrefix(r.Format, "HTTP cassette"):
			ins, err := replay.Cassette(path)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for i, in := range ins {
				name := r.Path + "#" + itoa(i)
				if why := interactionExclusion(in); why != "" {
					excluded[name] = why
					continue
				}
				sse := strings.HasPrefix(replay.SniffContentType(in.Response.Body), "text/event-stream")
				resp := in.Response
				if resp.Header.Get("Content-Type") == "" || sse {
					resp.Header.Set("Content-Type", replay.SniffContentType(resp.Body))
				}
				cases = append(cases, wireCase{Name: name, Family: fam, Resp: resp, Streaming: sse, Request: in.Request.Body})
				n++
			}
			if n > 0 {
				perFormat["cassette"]++
			}
		default:
			t.Fatalf("%s: unknown format %q", r.Path, r.Format)
		}
		seen[r.Path] = true
	}
	for p := range fixtureExclusions {
		if !seen[p] {
			t.Errorf("fixtureExclusions names %s, which INDEX.md does not list", p)
		}
	}
	return cases, excluded, perFormat
}

func isErrorBody(b []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) != nil {
		return false
	}
	e, ok := probe["error"]
	return ok && len(e) > 0 && e[0] == '{' && probe["choices"] == nil && probe["output"] == nil
}

func itoa(i int) string { return strconv.Itoa(i) }
