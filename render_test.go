package strata_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/session"
)

// providerFor is a provider name speaking each wire API.
var providerFor = map[llm.API]string{
	llm.APIAnthropic: "anthropic", llm.APIOpenAIChat: "openai-chat", llm.APIOpenAIResponses: "openai-responses",
	llm.APIBedrock: "bedrock", llm.APIGemini: "gemini",
}

// workspaceDir makes a project with an agent whose prompt, resource file and
// skill give every layout something to place.
func workspaceDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("NOTES.md", "# Notes\nBuild with `make`; test with `make test`.\n")
	write("main.go", "package main\n\nfunc main() {}\n")
	write(".kiro/agents/dev.json", `{"name":"dev","prompt":"You are a careful developer.","resources":["file://NOTES.md"],`+
		`"tools":["*"],"allowedTools":["*"]}`)
	return dir
}

// openWorkspace opens o with a test key and model and a fixed clock, closed
// when the test ends.
func openWorkspace(t *testing.T, o strata.Options) *strata.Workspace {
	t.Helper()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	o.APIKey, o.Model, o.Now = "test", "test-model", func() time.Time { return now }
	ws, err := strata.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// replayServer serves replies, authored for api, on 127.0.0.1; closed when
// the test ends.
func replayServer(t *testing.T, api llm.API, replies ...replay.Reply) *replay.Server {
	t.Helper()
	var responses []replay.Response
	for _, r := range replies {
		resp, err := replay.Turn(api, r)
		if err != nil {
			t.Fatal(err)
		}
		responses = append(responses, resp)
	}
	srv, err := replay.NewServer(responses...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// The body `run` sends equals the body `render` prints, for every layout and
// every wire API: on the first turn, and on a later prompt of the same stored
// session after a tool round-trip (render --session). Both go through the
// runtime's one loop and the provider's real SDK; the sent bodies are
// captured by a loopback server.
func TestRunSendsWhatRenderShows(t *testing.T) {
	for _, layout := range prompt.Names() {
		for _, api := range llm.APIs {
			t.Run(layout+"/"+string(api), func(t *testing.T) {
				dir := workspaceDir(t)
				script := []replay.Reply{
					{Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "call_1", Name: "glob", Input: json.RawMessage(`{"pattern":"*.go"}`)}}},
					{Blocks: []llm.Block{llm.TextBlock("There is one Go file: main.go.")}},
					{Blocks: []llm.Block{llm.TextBlock("Nothing else.")}},
				}
				srv := replayServer(t, api, script...)
				store := session.NewMemory()
				open := func() *strata.Workspace {
					return openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", Layout: layout, ProviderName: providerFor[api],
						BaseURL: srv.URL(), Mode: agent.ModeAll, Store: store, Params: llm.Params{MaxTokens: 1024}})
				}
				t.Setenv("AWS_REGION", "us-east-1")
				ws := open()

				first, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "which Go files are there?"})
				if err != nil {
					t.Fatal(err)
				}
				s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Prompt(context.Background(), "which Go files are there?"); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				// render --session in a new process: a new workspace on the same store.
				later, err := open().Render(context.Background(), strata.RenderOptions{Session: s.ID(), Prompt: "anything else?"})
				if err != nil {
					t.Fatal(err)
				}
				s2, err := open().ResumeSession(context.Background(), s.ID(), strata.SessionOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s2.Prompt(context.Background(), "anything else?"); err != nil {
					t.Fatal(err)
				}
				s2.Close()

				got := srv.Received()
				if len(got) != 3 {
					t.Fatalf("the provider got %d requests; want 3", len(got))
				}
				// A new conversation has no loop id before it runs: render
				// shows strata.RenderLoopID where the peers that send the
				// conversation id as prompt_cache_key put the run's.
				sent0 := strings.ReplaceAll(string(got[0].Body), s.LoopID(), strata.RenderLoopID)
				if sent0 != string(first.Body) {
					t.Errorf("first turn: run sent\n%s\nrender shows\n%s", got[0].Body, first.Body)
				}
				if !strings.Contains(string(got[1].Body), "main.go") {
					t.Errorf("the request after the glob call carries no tool result naming main.go:\n%s", got[1].Body)
				}
				if string(got[2].Body) != string(later.Body) {
					t.Errorf("after a tool round-trip: run sent\n%s\nrender --session shows\n%s", got[2].Body, later.Body)
				}
				// The loop passes the provider's wire API to the layout: Context
				// Pilot's seed re-injection is sent to Anthropic only.
				if layout == "panels" {
					if sent := strings.Contains(string(got[0].Body), "repeated for emphasis"); sent != (api == llm.APIAnthropic) {
						t.Errorf("panels on %s: seed re-injection sent = %v; want it on Anthropic only", api, sent)
					}
				}
				// The loop passes its loop id as the conversation id: the peers
				// that send prompt_cache_key per conversation send it to OpenAI.
				if layout == "opencode" || layout == "openhands" || layout == "codex" {
					key := `"prompt_cache_key":"` + s.LoopID() + `"`
					openAI := api == llm.APIOpenAIChat || api == llm.APIOpenAIResponses
					if sent := strings.Contains(string(got[2].Body), key); sent != openAI {
						t.Errorf("%s on %s: %s sent = %v; want %v", layout, api, key, sent, openAI)
					}
				}
				if gotPath, wantURL := got[2].Path, later.URL; !strings.HasSuffix(wantURL, gotPath) {
					t.Errorf("run sent to %s, render shows %s", gotPath, wantURL)
				}
			})
		}
	}
}

// A session resumed in a new process sends the request the uninterrupted
// loop would have sent: the restored layout replays the stored history, so a
// stateful layout keeps its placement (and the provider's cached prefix).
func TestResumeSendsWhatTheUninterruptedLoopSends(t *testing.T) {
	for _, layout := range prompt.Names() {
		t.Run(layout, func(t *testing.T) {
			dir := workspaceDir(t)
			srv, err := replay.NewResponder(func(replay.Request) replay.Response {
				r, _ := replay.Text(llm.APIAnthropic, "ok")
				return r
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			store := session.NewMemory()
			open := func() *strata.Workspace {
				return openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", Layout: layout, ProviderName: "anthropic",
					BaseURL: srv.URL(), Store: store})
			}
			prompts := []string{"first question", "second question", "third question"}
			// Uninterrupted: one session, three prompts.
			s, err := open().NewSession(context.Background(), strata.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range prompts {
				if _, err := s.Prompt(context.Background(), p); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			// Interrupted: a new workspace (process) for every prompt.
			var id string
			for i, p := range prompts {
				ws := open()
				var s *strata.Session
				if i == 0 {
					s, err = ws.NewSession(context.Background(), strata.SessionOptions{})
				} else {
					s, err = ws.ResumeSession(context.Background(), id, strata.SessionOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
				id = s.ID()
				if _, err := s.Prompt(context.Background(), p); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			got := srv.Received()
			for i := range prompts {
				if string(got[i].Body) != string(got[len(prompts)+i].Body) {
					t.Errorf("prompt %d: the resumed session sent\n%s\nthe uninterrupted one\n%s", i, got[len(prompts)+i].Body, got[i].Body)
				}
			}
		})
	}
}
