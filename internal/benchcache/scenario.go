// Package benchcache prices request layouts on recorded trajectories: it
// turns each trajectory into a session of per-call prompt contexts (the
// append or managed scenario), assembles every call with each layout, runs
// the provider's cache simulator over the requests, and prices them; the
// oracle and the provider's observed usage are priced alongside.
package benchcache

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trajectory"
)

// Scenario names how a trajectory becomes requests.
type Scenario string

// The scenarios (see Derive).
const (
	// Append: each request is the recorded history exactly (every request is
	// a prefix of the next).
	Append Scenario = "append"
	// Managed: what a context-managing agent would send: files the agent read
	// become working-file context items the layout places, refreshed when the
	// agent edits them, and their raw output in the history becomes a short
	// reference.
	Managed Scenario = "managed"
	// Paced: Append with idle gaps a person adds between calls (see Pacing):
	// the recorded sessions never idle 5 minutes, real use does.
	Paced Scenario = "paced"
	// Parallel: Append with every run of Options.Parallel consecutive tool
	// calls merged into one response carrying that many tool_use blocks
	// (parallel tool calls; see mergeParallel).
	Parallel Scenario = "parallel"
)

// Scenarios lists every scenario, in report order.
var Scenarios = []Scenario{Append, Managed, Paced, Parallel}

// ParseScenario returns the scenario named s, or an error listing the valid
// names.
func ParseScenario(s string) (Scenario, error) {
	for _, x := range Scenarios {
		if string(x) == s {
			return x, nil
		}
	}
	return "", fmt.Errorf("unknown scenario %q (valid: append, managed, paced, parallel)", s)
}

// Call is one model call of a session: the context a layout assembles, when
// it was sent, the output tokens it produced, and the provider's recorded
// usage.
type Call struct {
	Context  prompt.Context // System, Tools, History, Files (managed) and Now are set
	At       time.Time
	Output   int64
	Observed trajectory.Usage
}

// Session is one trajectory as a sequence of calls.
type Session struct {
	Name  string // the trajectory's instance id
	Model string // the model the trajectory was recorded with
	Calls []Call
}

// bashSpec is the execute_bash tool spec every call offers (mini-swe-agent's
// only action, mapped by the trajectory package).
var bashSpec = (&tool.ExecuteBash{}).Spec()

// Derive returns t as a session in scenario s with the default Derivation
// (see DeriveWith).
func Derive(t *trajectory.Trajectory, s Scenario) (*Session, error) {
	return DeriveWith(t, s, Derivation{})
}

// DeriveWith returns t as a session in scenario s. d.Static, when set, is
// the static context of a real agent every call carries (see Static). The
// derivation is deterministic: the same trajectory and d always give the
// same contexts. It fails on an unknown scenario, a bad d, or a trajectory
// call without a request.
func DeriveWith(t *trajectory.Trajectory, s Scenario, d Derivation) (*Session, error) {
	if _, err := ParseScenario(string(s)); err != nil {
		return nil, err
	}
	d = d.withDefaults()
	if err := d.check(); err != nil {
		return nil, err
	}
	out := &Session{Name: t.InstanceID, Model: t.Model}
	var m *manager
	if s == Managed {
		m = newManager()
	}
	if s == Parallel {
		return mergeParallel(t, d, out)
	}
	var pause time.Duration
	for i, c := range t.Calls {
		req := t.Request(i)
		if req == nil {
			return nil, fmt.Errorf("%s: call %d has no request", t.Path, i)
		}
		if s == Paced && i > 0 && d.Pacing.pauseBefore(t.InstanceID, i) {
			pause += d.Pacing.Length
		}
		at := c.Created.Add(pause)
		pc := d.Static.context(t.InstanceID, req.SystemText(), req.Messages, at)
		if m != nil {
			var files []prompt.File
			pc.History, files = m.apply(req.Messages, at.UnixMilli())
			pc.Files = append(pc.Files, files...)
		}
		out.Calls = append(out.Calls, Call{Context: pc, At: at, Output: c.Usage.CompletionTokens, Observed: c.Usage})
	}
	return out, nil
}

// Managed-scenario rules, applied to each execute_bash call with its result,
// in order. A command is a file read when, as a whole, it is one of
//
//	cat PATH · head [-n N | -N] PATH · tail [-n N | -N] PATH ·
//	sed -n 'RANGEp' PATH · nl [-ba] PATH [| sed -n 'RANGEp']
//
// and its result is not an error. The read becomes the working-file item
// "PATH" (whole-file reads) or "PATH (VIEW)" (the command's range), holding
// the observed output; its tool_result text is replaced by a one-line
// reference. A command is an edit of PATH when it contains `sed -i`, a `>` or
// `>>` redirection, `git apply`, `patch`, or a python/python3 invocation whose
// text mentions `.write(`, `write_text(` or `open(` — and PATH, the path of a
// working-file item, appears in it: the item is refreshed (its content gets
// an edit note and its refresh time is the call's), as a context-managing
// agent would re-read it.
var (
	readCmd = regexp.MustCompile(`^(?:cat\s+(\S+)|head(?:\s+-n\s*\d+|\s+-\d+)?\s+(\S+)|tail(?:\s+-n\s*\d+|\s+-\d+)?\s+(\S+)|` +
		`sed\s+-n\s+'(\d+,\d+p)'\s+(\S+)|nl(?:\s+-ba)?\s+(\S+)(?:\s*\|\s*sed\s+-n\s+'(\d+,\d+p)')?)$`)
	editCmd   = regexp.MustCompile(`sed\s+-i|>>?\s*\S|git\s+apply|\bpatch\b`)
	pythonCmd = regexp.MustCompile(`\bpython3?\b[\s\S]*(\.write\(|write_text\(|open\()`)
)

// item is one working file (or file view).
type item struct {
	key, content string
	refreshed    int64
}

// manager holds the working files seen so far in a managed session.
type manager struct {
	items []*item
	byKey map[string]*item
	seen  map[string]bool // tool_use ids already applied
	refs  map[string]string
}

func newManager() *manager {
	return &manager{byKey: map[string]*item{}, seen: map[string]bool{}, refs: map[string]string{}}
}

// apply returns the managed history (read outputs replaced by references)
// and the working files as of a request made at now.
func (m *manager) apply(history []llm.Message, now int64) ([]llm.Message, []prompt.File) {
	calls := map[string]string{} // tool_use id → command
	out := make([]llm.Message, len(history))
	for i, msg := range history {
		out[i] = msg
		for _, b := range msg.Content {
			if b.Type == llm.BlockToolUse {
				calls[b.ID] = command(b.Input)
			}
		}
		if msg.Role != llm.RoleUser {
			continue
		}
		var blocks []llm.Block
		for _, b := range msg.Content {
			if b.Type == llm.BlockToolResult {
				if !m.seen[b.ID] {
					m.seen[b.ID] = true
					m.observe(b, calls[b.ID], now)
				}
				if ref, ok := m.refs[b.ID]; ok {
					b = llm.ToolResultBlock(b.ID, ref, false)
				}
			}
			blocks = append(blocks, b)
		}
		out[i].Content = blocks
	}
	files := make([]prompt.File, len(m.items))
	for i, it := range m.items {
		files[i] = prompt.File{Path: it.key, Content: it.content, Refreshed: it.refreshed}
	}
	return out, files
}

// observe applies one tool call and its result to the working files.
func (m *manager) observe(result llm.Block, cmd string, now int64) {
	text := ""
	if len(result.Content) > 0 {
		text = result.Content[0].Text
	}
	cmd = strings.TrimSpace(cmd)
	if g := readCmd.FindStringSubmatch(cmd); g != nil && !result.IsError {
		path, view := firstNonEmpty(g[1], g[2], g[3], g[5], g[6]), firstNonEmpty(g[4], g[7])
		key := path
		switch {
		case view != "":
			key += " (lines " + strings.TrimSuffix(view, "p") + ")"
		case strings.HasPrefix(cmd, "head"), strings.HasPrefix(cmd, "tail"):
			key += " (" + strings.Fields(cmd)[0] + ")"
		}
		content := output(text)
		if it, ok := m.byKey[key]; ok {
			if it.content != content {
				it.content, it.refreshed = content, now
			}
		} else {
			it := &item{key: key, content: content, refreshed: now}
			m.items = append(m.items, it)
			m.byKey[key] = it
		}
		m.refs[result.ID] = fmt.Sprintf("[output (%d lines) shown in working file %s]", strings.Count(content, "\n")+1, key)
		return
	}
	if !editCmd.MatchString(cmd) && !pythonCmd.MatchString(cmd) {
		return
	}
	for _, it := range m.items {
		path, _, _ := strings.Cut(it.key, " (")
		if strings.Contains(cmd, path) {
			first, _, _ := strings.Cut(cmd, "\n")
			it.content += fmt.Sprintf("\n[edited after this view by `%s`]", first)
			it.refreshed = now
		}
	}
}

// output returns the <output> body of a mini-swe-agent observation, or the
// whole text.
func output(obs string) string {
	if _, after, ok := strings.Cut(obs, "<output>\n"); ok {
		if body, _, ok := strings.Cut(after, "</output>"); ok {
			return strings.TrimSuffix(body, "\n")
		}
	}
	return obs
}

func command(input []byte) string {
	var v struct{ Command string }
	_ = json.Unmarshal(input, &v)
	return v.Command
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
