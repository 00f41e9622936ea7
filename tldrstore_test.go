package strata_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session" // also registers the "sqlite" driver that loads the version-3 dump
)

// tldrModel answers tl;dr requests with "tl;dr #N", N counting every tl;dr
// request, so a text summarized twice gets two different tl;drs, and every
// other request with a long answer. It records which text each tl;dr
// request summarized and the bodies of the other requests.
type tldrModel struct {
	t       *testing.T
	mu      sync.Mutex
	sources []string // the text of each tl;dr request, in order
	answers []string // bodies of the other requests
}

func (m *tldrModel) respond(r replay.Request) replay.Response {
	body := string(r.Body)
	m.mu.Lock()
	defer m.mu.Unlock()
	text := fmt.Sprintf("answer %d: the build runs go vet, then the tests, then packages the binary for every platform", len(m.answers)+1)
	if msgs := requestMessages(m.t, body); len(msgs) == 1 && strings.HasPrefix(msgs[0], compact.TLDRPrompt) {
		m.sources = append(m.sources, strings.TrimPrefix(msgs[0], compact.TLDRPrompt))
		text = fmt.Sprintf("tl;dr #%d", len(m.sources))
	} else {
		m.answers = append(m.answers, body)
	}
	resp, err := replay.AnthropicStream("claude-sonnet-4-5", llm.Usage{Input: 100, Output: 10}, llm.StopEndTurn, llm.TextBlock(text))
	if err != nil {
		m.t.Error(err)
	}
	return resp
}

// counts returns how many tl;dr requests and other requests were made.
func (m *tldrModel) counts() (tldrs, answers int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sources), len(m.answers)
}

// lastAnswer returns the body of the last request that was not a tl;dr's.
func (m *tldrModel) lastAnswer() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answers[len(m.answers)-1]
}

var tldrText = regexp.MustCompile(`tl;dr #\d+`)

// With --compact --compact-tldr, each tl;dr is asked of the model once per
// session and stored with it: a session resumed in a new process (a new
// workspace on the same SQLite file) replays its compaction with the
// stored texts — no tl;dr request, no usage — and its next request shows
// the chunks exactly as before the resume, so the cached prefix holds; an
// agent swap, which lays the conversation out again for the new agent,
// asks nothing either. The resume used to ask the model for every tl;dr
// again (a different text each time here), and strata render --session
// showed the chunks without them.
func TestResumedSessionReusesItsStoredTLDRs(t *testing.T) {
	dir, db := t.TempDir(), filepath.Join(t.TempDir(), "strata.db")
	for _, a := range []string{"alpha", "beta"} {
		writeFile(t, filepath.Join(dir, ".kiro", "agents", a+".json"), `{"name":"`+a+`","prompt":"you are `+a+`","tools":["fs_read"]}`)
	}
	m := &tldrModel{t: t}
	tiny := compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	open := func() *strata.Workspace {
		st, err := session.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		ws, err := strata.Open(t.Context(), strata.Options{Dir: dir, Agent: "alpha", Layout: "panels", ProviderName: "anthropic",
			Respond: m.respond, Store: st, Compaction: &tiny, CompactTLDR: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	question := func(i int) string {
		return fmt.Sprintf("question %d: %s", i, strings.Repeat("explain the build in detail, step by step. ", 4))
	}
	ctx := t.Context()
	s, err := open().NewSession(ctx, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := s.Prompt(ctx, question(i)); err != nil {
			t.Fatal(err)
		}
	}
	shown := tldrText.FindAllString(m.lastAnswer(), -1)
	asked, _ := m.counts()
	used := s.Usage()
	if len(shown) < 2 || asked < len(shown) {
		t.Fatalf("the last request shows tl;drs %q after %d tl;dr requests; the test needs some", shown, asked)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	ws := open()
	// strata render --session shows the request the resumed session sends
	// next: the stored tl;drs, asked of no model.
	rendered, err := ws.Render(ctx, strata.RenderOptions{Session: s.ID(), Prompt: question(4)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shown {
		if !strings.Contains(string(rendered.Body), s) {
			t.Errorf("the rendered request lacks %q, which the chunks showed: %q", s, tldrText.FindAllString(string(rendered.Body), -1))
		}
	}
	r, err := ws.ResumeSession(ctx, s.ID(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, _ := m.counts(); n != asked {
		t.Errorf("the resume made %d tl;dr request(s); want none: every tl;dr is stored", n-asked)
	}
	if r.Usage() != used {
		t.Errorf("resumed usage %+v; want the stored %+v", r.Usage(), used)
	}
	if _, err := r.Prompt(ctx, question(4)); err != nil {
		t.Fatal(err)
	}
	after := m.lastAnswer()
	for _, s := range shown {
		if !strings.Contains(after, s) {
			t.Errorf("the first request after the resume lacks %q, which the chunks showed before: %q", s, tldrText.FindAllString(after, -1))
		}
	}
	asked, _ = m.counts()
	if err := r.SwapAgent(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.counts(); n != asked {
		t.Errorf("the agent swap made %d tl;dr request(s); want none", n-asked)
	}
	seen := map[string]int{}
	for i, src := range m.sources {
		if j, ok := seen[src]; ok {
			t.Errorf("tl;dr requests %d and %d summarized the same text %.40q…", j+1, i+1, src)
		}
		seen[src] = i
	}
}

// A session that version 3 of the store recorded with --compact-tldr
// (session/testdata/schema3_compacted.sql; version 3 kept no tl;dr) asks
// the model for its chunks' tl;drs once, on its first resume after the
// migration, and stores them: the next resume asks nothing.
func TestVersion3SessionStoresItsTLDRsOnResume(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("session", "testdata", "schema3_compacted.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "strata.db")
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	m := &tldrModel{t: t}
	tiny := compact.Policy{ChunkMinMessages: 2, ChunkMinTokens: 1, KeepMinMessages: 2, KeepMinTokens: 1}
	resume := func() int {
		st, err := session.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ws, err := strata.Open(t.Context(), strata.Options{Dir: t.TempDir(), NoBuiltins: true, Layout: "panels", ProviderName: "anthropic",
			Respond: m.respond, Store: st, Compaction: &tiny, CompactTLDR: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		before, _ := m.counts()
		r, err := ws.ResumeSession(t.Context(), "9956dc33", strata.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		after, _ := m.counts()
		return after - before
	}
	if n := resume(); n == 0 {
		t.Fatal("the first resume of the version-3 session asked for no tl;dr; the fixture needs chunks with long messages")
	}
	if n := resume(); n != 0 {
		t.Errorf("the second resume asked for %d tl;dr(s); want none: the first resume stored them", n)
	}
}
