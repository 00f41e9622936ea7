package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// A context file edited during a session reaches the next request: the
// kiro layout's resource layer and the panels layout's file panel (a
// Context Pilot file panel is re-cached by its file watcher; kiro rebuilds
// the context message every turn). Under --layout panels the project's
// files are the P5 Tree panel (docs/panels.md, rule 5).
func TestEditedContextFileReachesTheNextRequest(t *testing.T) {
	for _, layout := range []string{"kiro", "panels"} {
		t.Run(layout, func(t *testing.T) {
			dir := workspaceDir(t)
			reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}}
			srv := replayServer(t, llm.APIAnthropic, reply, reply)
			ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", Layout: layout, ProviderName: "anthropic",
				BaseURL: srv.URL(), Mode: agent.ModeAll, Store: session.NewMemory()})
			s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Prompt(context.Background(), "build?"); err != nil {
				t.Fatal(err)
			}
			notes := filepath.Join(dir, "NOTES.md")
			if err := os.WriteFile(notes, []byte("# Notes\nBuild with `go build ./...` now.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(notes, later, later); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(context.Background(), "and now?"); err != nil {
				t.Fatal(err)
			}
			got := srv.Received()
			if len(got) != 2 {
				t.Fatalf("%d requests", len(got))
			}
			first, second := string(got[0].Body), string(got[1].Body)
			if !strings.Contains(first, "Build with `make`") || !strings.Contains(second, "Build with `go build ./...` now.") || strings.Contains(second, "Build with `make`") {
				t.Errorf("the edit did not reach the second request:\n%s", second)
			}
			if layout == "panels" {
				for _, body := range []string{first, second} {
					if !strings.Contains(body, "======= [P5] Tree =======\\n") || !strings.Contains(body, "main.go") {
						t.Errorf("no P5 Tree panel listing main.go:\n%s", body)
					}
				}
			}
		})
	}
}
