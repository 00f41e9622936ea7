package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// A context file swapped for a symlink out of the workspace after the
// agent was loaded is refused on refresh as it would have been at load
// time: the secret it points to never reaches a request, and the warning
// names the file (the refresher once read changed files with os.ReadFile,
// bypassing the sandbox every other context read goes through).
func TestAttackContextFileSwappedForSymlinkAfterLoad(t *testing.T) {
	dir := workspaceDir(t)
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}}
	srv := replayServer(t, llm.APIAnthropic, reply, reply)
	var warnings []string
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", Layout: "kiro", ProviderName: "anthropic",
		BaseURL: srv.URL(), Mode: agent.ModeAll, Store: session.NewMemory(), Warn: func(m string) { warnings = append(warnings, m) }})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "build?"); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "NOTES.md")
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, notes); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if body := string(got[1].Body); strings.Contains(body, "TOPSECRET") || !strings.Contains(body, "Build with `make`") {
		t.Errorf("the second request read through the symlink or lost the file's last content:\n%s", body)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "context file "+notes) }) {
		t.Errorf("no warning names %s: %q", notes, warnings)
	}
}
