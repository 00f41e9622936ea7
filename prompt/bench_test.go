package prompt_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/prompt"
	_ "github.com/strata-agent/strata/prompt/cachefit"
	_ "github.com/strata-agent/strata/prompt/flat"
	_ "github.com/strata-agent/strata/prompt/kiro"
	_ "github.com/strata-agent/strata/prompt/panels"
	_ "github.com/strata-agent/strata/prompt/peers"
	_ "github.com/strata-agent/strata/prompt/tiered"
	"github.com/strata-agent/strata/token"
	"github.com/strata-agent/strata/trajectory"
)

// longSession strings real mini-swe-agent train trajectories together (tool
// ids renamed to stay unique) until the history has turns tool round-trips
// and returns it with the first trajectory's system prompt.
func longSession(b *testing.B, turns int) prompt.Context {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(shared.Path(b, "data/trajectories/mini-swe-agent/train"), "*.traj.json"))
	sort.Strings(files)
	var c prompt.Context
	n := 0
	for fi, f := range files {
		t, err := trajectory.Load(f)
		if err != nil {
			b.Fatal(err)
		}
		if c.System == "" {
			c.System = t.System
		}
		for _, m := range t.Messages {
			m.Content = append([]llm.Block(nil), m.Content...)
			for i := range m.Content {
				if t := m.Content[i].Type; t == llm.BlockToolUse || t == llm.BlockToolResult {
					m.Content[i].ID = fmt.Sprintf("%s_t%d", m.Content[i].ID, fi)
				}
			}
			if k := len(c.History); k > 0 && c.History[k-1].Role == m.Role {
				c.History[k-1].Content = append(c.History[k-1].Content, m.Content...)
			} else {
				c.History = append(c.History, m)
			}
			if m.Role == llm.RoleAssistant {
				if n++; n == turns {
					c.History = append(c.History, llm.UserText("Continue."))
					return c
				}
			}
		}
	}
	b.Fatalf("train trajectories hold only %d turns; want %d", n, turns)
	return c
}

// BenchmarkAssembleEncode200 assembles and encodes (anthropic.NewBody +
// json.Marshal) a 200-turn session built from real trajectories, per layout,
// and reports the time as a ratio to one json.Marshal of the same final body
// measured in the same loop (goal ≤ 1.5×).
func BenchmarkAssembleEncode200(b *testing.B) {
	base := longSession(b, 200)
	base.Model, base.MaxTokens, base.Now = "claude-sonnet-4-5", 8192, 1795428000000
	base.Tools = []llm.ToolSpec{{Name: "execute_bash", Description: "Run a bash command.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}
	b.Logf("session: %d messages, %d tokens (estimate)", len(base.History), token.EstimateBlocks(flatten(base.History)))
	for _, name := range prompt.Names() {
		b.Run(name, func(b *testing.B) {
			layout, err := prompt.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			var assemble, marshal time.Duration
			var size int
			for i := 0; i < b.N; i++ {
				c := base
				t0 := time.Now()
				req, _, err := layout.Assemble(&c)
				if err != nil {
					b.Fatal(err)
				}
				body, err := anthropic.NewBody(req)
				if err != nil {
					b.Fatal(err)
				}
				enc, err := json.Marshal(body)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := json.Marshal(body); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				assemble += t1.Sub(t0)
				marshal += t2.Sub(t1)
				size = len(enc)
			}
			b.ReportMetric(float64(assemble)/float64(marshal), "x_marshal")
			b.ReportMetric(float64(size), "body_bytes")
		})
	}
}

func flatten(ms []llm.Message) []llm.Block {
	var out []llm.Block
	for _, m := range ms {
		out = append(out, m.Content...)
	}
	return out
}
