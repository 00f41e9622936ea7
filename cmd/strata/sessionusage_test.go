package main

import (
	"encoding/json"
	"github.com/strata-agent/strata/keepalive"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// stepClock is a keepalive.Clock whose timers run only when the test
// calls next: no test waits for a ping.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []func()
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *stepClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, f)
	i := len(c.timers) - 1
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		armed := c.timers[i] != nil
		c.timers[i] = nil
		return armed
	}
}

// next runs the last armed timer (a ping) after moving the clock on.
func (c *stepClock) next(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	var f func()
	for i := len(c.timers) - 1; i >= 0 && f == nil; i-- {
		f, c.timers[i] = c.timers[i], nil
	}
	c.now = c.now.Add(4 * time.Minute)
	c.mu.Unlock()
	if f == nil {
		t.Fatal("no keep-alive ping armed")
	}
	f()
}

// A session whose keep-alive pings the runtime sent (the real Anthropic SDK
// against a loopback server) shows them in `strata sessions show` and
// `sessions list`, read back from the session database by the CLI: the
// turns' rows keep the model calls' usage, the pings have a row of their
// own (count and tokens), and the session row and the list's token columns
// are their sum (docs/keepalive.md, docs/cli.md).
func TestSessionsShowKeepAlivePings(t *testing.T) {
	data := t.TempDir()
	st, err := session.Open(filepath.Join(data, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	turn := llm.Usage{Input: 40, Output: 7, CacheWrite: 2000}
	ping := llm.Usage{Input: 3, Output: 1, CacheRead: 2000}
	respond := func(r replay.Request) replay.Response {
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.Unmarshal(r.Body, &body)
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}, Usage: turn}
		if body.MaxTokens == 1 {
			reply = replay.Reply{Blocks: []llm.Block{llm.TextBlock("O")}, Stop: llm.StopMaxTokens, Usage: ping}
		}
		resp, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			t.Error(err)
		}
		return resp
	}
	clk := &stepClock{now: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)}
	ws, err := strata.Open(t.Context(), strata.Options{Dir: t.TempDir(), NoProjectFiles: true, NoBuiltins: true, DisableRepoContext: true,
		Instructions: strings.Repeat("Answer briefly. ", 64), Store: st, ProviderName: "anthropic", Respond: respond,
		KeepAlive: keepalive.Options{MaxPings: 2, Interval: 4 * time.Minute, Clock: clk}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "a question"); err != nil {
		t.Fatal(err)
	}
	clk.next(t)
	clk.next(t)
	if ka := s.KeepAlive(); ka.Pings != 2 {
		t.Fatalf("%d pings sent; want 2", ka.Pings)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	env := []string{"STRATA_DATA_DIR=" + data}
	r := runCLI(t, t.TempDir(), env, "sessions", "show", id)
	if r.code != 0 {
		t.Fatalf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range []string{
		`(?m)^0\s+\w+\s+0\s+user\s+completed\s+end_turn\s+40\s+7\s+0\s+2000\s+2047\s*$`, // the turn: its model call only
		`(?m)^turns\s+1\s+40\s+7\s+0\s+2000\s+2047\s*$`,
		`(?m)^keep-alive pings\s+2\s+6\s+2\s+4000\s+0\s+4008\s*$`,
		`(?m)^session\s+3\s+46\s+9\s+4000\s+2000\s+6055\s*$`,
	} {
		if !regexp.MustCompile(row).MatchString(r.stdout) {
			t.Errorf("show has no row matching %s:\n%s", row, r.stdout)
		}
	}
	r = runCLI(t, t.TempDir(), env, "sessions", "list")
	if !regexp.MustCompile(`(?m)^` + id + `\s+\S+ \S+\s+1\s+1\s+2\s+46\s+9\s+4000\s+2000\s+a question$`).MatchString(r.stdout) {
		t.Errorf("list: want 1 loop, 1 turn, 2 pings and the session's tokens, pings included:\n%s", r.stdout)
	}
	r = runCLI(t, t.TempDir(), env, "sessions", "list", "--format", "json")
	var got []sessionJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("list --format json: %v\n%s", err, r.stdout)
	}
	if g := got[0]; g.Loops != 1 || g.Usage != turn.WithTotal() || g.Pings.Count != 2 || g.Pings.Usage != ping.WithTotal().Add(ping.WithTotal()) ||
		g.TotalUsage != turn.WithTotal().Add(g.Pings.Usage) {
		t.Errorf("list --format json: %+v; want usage the turn's, keepalive_pings 2 and total_usage their sum", g)
	}
}
