package trajectory

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
)

const trainRel = "data/trajectories/mini-swe-agent/train"

// loadTrain loads every train trajectory.
func loadTrain(t *testing.T) []*Trajectory {
	t.Helper()
	dir := shared.Path(t, trainRel)
	files, err := filepath.Glob(filepath.Join(dir, "*.traj.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no trajectories in %s (%v)", dir, err)
	}
	sort.Strings(files)
	out := make([]*Trajectory, 0, len(files))
	for _, f := range files {
		tr, err := Load(f)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		out = append(out, tr)
	}
	return out
}

type statsRow struct {
	messages, calls, prompt, cached, completion int64
}

// trainStats reads stats.csv's rows whose split is "train", keyed by file
// name.
func trainStats(t *testing.T) map[string]statsRow {
	t.Helper()
	f, err := os.Open(shared.Path(t, "data/trajectories/stats.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("stats.csv: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) int64 {
		n, err := strconv.ParseInt(r[col[name]], 10, 64)
		if err != nil {
			t.Fatalf("stats.csv %s: %v", name, err)
		}
		return n
	}
	out := map[string]statsRow{}
	for _, r := range rows[1:] {
		if r[col["split"]] != "train" {
			continue
		}
		out[filepath.Base(r[col["file"]])] = statsRow{
			messages: num(r, "n_messages"), calls: num(r, "n_model_calls"),
			prompt: num(r, "total_prompt_tokens"), cached: num(r, "total_cached_tokens"),
			completion: num(r, "total_completion_tokens"),
		}
	}
	return out
}

// TestLoadTrain: every train file loads, call counts match
// info.model_stats.api_calls, token sums match stats.csv, and every tool_use
// has its tool_result.
func TestLoadTrain(t *testing.T) {
	trajs := loadTrain(t)
	stats := trainStats(t)
	if len(stats) != len(trajs) {
		t.Errorf("stats.csv has %d train rows, directory has %d files", len(stats), len(trajs))
	}
	var toolUses, errorsSeen, textOnly int
	for _, tr := range trajs {
		name := filepath.Base(tr.Path)
		if len(tr.Calls) != tr.APICalls {
			t.Errorf("%s: %d calls, info.model_stats.api_calls = %d", name, len(tr.Calls), tr.APICalls)
		}
		st, ok := stats[name]
		if !ok {
			t.Errorf("%s: no train row in stats.csv", name)
			continue
		}
		obs := tr.Observed()
		if int64(len(tr.Raw)) != st.messages || int64(len(tr.Calls)) != st.calls ||
			obs.PromptTokens != st.prompt || obs.CachedTokens != st.cached || obs.CompletionTokens != st.completion {
			t.Errorf("%s: messages %d calls %d prompt %d cached %d completion %d; stats.csv %+v",
				name, len(tr.Raw), len(tr.Calls), obs.PromptTokens, obs.CachedTokens, obs.CompletionTokens, st)
		}
		if math.Abs(obs.CostUSD-tr.InstanceCost) > 1e-6 {
			t.Errorf("%s: Σ cost %.6f, instance_cost %.6f", name, obs.CostUSD, tr.InstanceCost)
		}
		if tr.InstanceID == "" || tr.Model != "google/gemini-3-pro-preview" || tr.System == "" {
			t.Errorf("%s: instance %q model %q", name, tr.InstanceID, tr.Model)
		}
		if len(tr.Messages) != len(tr.Raw)-1 {
			t.Errorf("%s: %d mapped messages for %d raw", name, len(tr.Messages), len(tr.Raw))
		}
		// Pairing: each tool_use is answered by the very next message.
		answered := map[string]bool{}
		for j, m := range tr.Messages {
			if err := m.Validate(); err != nil {
				t.Fatalf("%s: message %d: %v", name, j, err)
			}
			for _, b := range m.Content {
				switch b.Type {
				case llm.BlockToolUse:
					toolUses++
					if b.Name != ToolName || !json.Valid(b.Input) {
						t.Errorf("%s: message %d: bad tool_use %+v", name, j, b)
					}
					var in struct{ Command string }
					if err := json.Unmarshal(b.Input, &in); err != nil || in.Command == "" {
						t.Errorf("%s: message %d: input %s", name, j, b.Input)
					}
					if j+1 >= len(tr.Messages) {
						t.Fatalf("%s: tool_use %s in the last message", name, b.ID)
					}
					next := tr.Messages[j+1]
					if next.Role != llm.RoleUser || len(next.Content) != 1 || next.Content[0].Type != llm.BlockToolResult || next.Content[0].ID != b.ID {
						t.Errorf("%s: tool_use %s not answered by message %d", name, b.ID, j+1)
					}
					answered[b.ID] = true
				case llm.BlockToolResult:
					if !answered[b.ID] {
						t.Errorf("%s: tool_result %s without a tool_use", name, b.ID)
					}
					if b.IsError {
						errorsSeen++
					}
				}
			}
			if m.Role == llm.RoleAssistant && len(m.ToolUses()) == 0 {
				textOnly++
			}
		}
		for i := range tr.Calls {
			req := tr.Request(i)
			if last := req.Messages[len(req.Messages)-1]; last.Role != llm.RoleUser {
				t.Fatalf("%s: request %d ends with %s", name, i, last.Role)
			}
			if tr.Reply(i).Role != llm.RoleAssistant {
				t.Fatalf("%s: reply %d", name, i)
			}
			if err := req.Validate(); err != nil {
				t.Fatalf("%s: request %d: %v", name, i, err)
			}
		}
	}
	t.Logf("%d files, %d tool_use blocks (%d error results), %d text-only replies (format errors)", len(trajs), toolUses, errorsSeen, textOnly)
	if toolUses == 0 || errorsSeen == 0 {
		t.Error("expected tool calls and some error results")
	}
}

// TestValidateGemini replays every train trajectory through the Gemini
// simulator and reports the mean absolute error of simulated vs observed
// cached tokens per call, for one shared cache and for one cache per
// upstream provider, and for a few alternative granularities.
func TestValidateGemini(t *testing.T) {
	trajs := loadTrain(t)
	p, ok := cachesim.Lookup("google/gemini-3-pro-preview")
	if !ok {
		t.Fatal("no price for gemini-3-pro-preview")
	}
	type variant struct {
		name string
		opt  ValidateOptions
	}
	alt := func(minTok, gran int64) cachesim.Price {
		q := p
		q.MinCacheableTokens, q.CacheGranularityTokens = minTok, gran
		return q
	}
	variants := []variant{
		{"table (min 2048, step 2048), one cache", ValidateOptions{}},
		{"table (min 2048, step 2048), cache per upstream", ValidateOptions{PerUpstream: true}},
		{"min 4096 (docs), step 2048, one cache", ValidateOptions{Price: alt(4096, 2048)}},
		{"min 1024, step 1024, one cache", ValidateOptions{Price: alt(1024, 1024)}},
		{"min 1024, step 128 (OpenAI-like), one cache", ValidateOptions{Price: alt(1024, 128)}},
	}
	for _, v := range variants {
		var calls int
		var absSum float64
		var obs, sim, prompt int64
		var missed int // calls the provider served with no cache hit while the simulator hit
		var missedAbs float64
		for _, tr := range trajs {
			res, err := ValidateGemini(tr, v.opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Calls {
				if c.Observed == 0 && c.Simulated > 0 {
					missed++
					missedAbs += float64(c.Simulated)
				}
			}
			calls += len(res.Calls)
			absSum += res.MAE * float64(len(res.Calls))
			obs += res.SumObserved
			sim += res.SumSimulated
			prompt += res.SumPrompt
		}
		if calls == 0 {
			t.Fatal("no calls replayed")
		}
		mae := absSum / float64(calls)
		if math.IsNaN(mae) || mae < 0 {
			t.Fatalf("MAE = %v", mae)
		}
		t.Logf("%-48s calls %d  MAE %7.1f tokens/call  hit ratio observed %.4f simulated %.4f  (%d calls observed 0 but simulated a hit: %.0f%% of the error)",
			v.name, calls, mae, float64(obs)/float64(prompt), float64(sim)/float64(prompt), missed, 100*missedAbs/absSum)
	}
}

func TestParseErrors(t *testing.T) {
	okMsgs := `[{"role":"system","content":"s"},{"role":"user","content":"u"}`
	for _, tc := range []struct{ doc, want string }{
		{`{`, "bad.json"},
		{`{"messages":[]}`, "trajectory_format: missing"},
		{`{"trajectory_format":"x","messages":[]}`, "trajectory_format"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":[]}`, "messages: empty"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"user","content":"u"}]}`, "messages[0].role"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"system","content":["x"]}]}`, "messages[0]"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":` + okMsgs + `,{"role":"tool","content":"x"}]}`, "messages[2].role"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":` + okMsgs + `,{"role":"assistant","content":"x"}]}`, "messages[2].extra.response: missing"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":` + okMsgs + `,{"role":"assistant","content":"x","extra":{"response":{}}}]}`, "messages[2].extra.response.usage: missing"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":` + okMsgs + `,{"role":"assistant","content":"x","extra":{"response":{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}}}}]}`, "messages[2].extra.response.usage"},
		{`{"trajectory_format":"mini-swe-agent-1","messages":` + okMsgs + `,{"role":"assistant","content":"x","extra":{"response":{"usage":{"prompt_tokens":"5"}}}}]}`, "messages[2]"},
	} {
		_, err := Parse("bad.json", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.70s): err = %v, want it to name bad.json and %q", tc.doc, err, tc.want)
		}
	}
	if _, err := Load("/nonexistent/x.traj.json"); err == nil || !strings.Contains(err.Error(), "x.traj.json") {
		t.Errorf("Load missing file: %v", err)
	}
}

func TestConvert(t *testing.T) {
	resp := `"extra":{"response":{"created":1763510516,"provider":"Google","model":"m","usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}}`
	doc := `{"trajectory_format":"mini-swe-agent-1","instance_id":"x__y-1","messages":[
	 {"role":"system","content":"sys"},
	 {"role":"user","content":"task"},
	 {"role":"assistant","content":"THOUGHT: look <here>\n\n` + "```bash\\nls -la && echo \\\"a<b>\\\"\\n```" + `\nafter","extra":{}, ` + resp + `},
	 {"role":"user","content":"<returncode>2</returncode>\n<output>\nno\n</output>"},
	 {"role":"assistant","content":"` + "```bash\\na\\n```\\n```bash\\nb\\n```" + `", ` + resp + `},
	 {"role":"user","content":"Please always provide EXACTLY ONE action"},
	 {"role":"assistant","content":"` + "```bash\\necho done\\n```" + `", ` + resp + `},
	 {"role":"user","content":"diff --git a/x b/x"}]}`
	doc = strings.Replace(doc, `"extra":{}, `, "", 1)
	tr, err := Parse("synthetic.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Calls) != 3 || tr.Model != "m" {
		t.Fatalf("calls %d model %q", len(tr.Calls), tr.Model)
	}
	m := tr.Messages
	if len(m) != 7 {
		t.Fatalf("messages %d", len(m))
	}
	a := m[1].Content
	if len(a) != 3 || a[0].Text != "THOUGHT: look <here>" || a[1].Text != "after" || a[2].Type != llm.BlockToolUse ||
		a[2].ID != "call_0" || string(a[2].Input) != `{"command":"ls -la && echo \"a<b>\""}` {
		t.Errorf("assistant 0: %+v", a)
	}
	if r := m[2].Content; len(r) != 1 || r[0].Type != llm.BlockToolResult || r[0].ID != "call_0" || !r[0].IsError {
		t.Errorf("result 0: %+v", r)
	}
	if m[3].Text() == "" || len(m[3].ToolUses()) != 0 || m[4].Content[0].Type != llm.BlockText {
		t.Errorf("format error turn: %+v %+v", m[3], m[4])
	}
	if u := m[5].ToolUses(); len(u) != 1 || u[0].ID != "call_2" || len(m[5].Content) != 1 {
		t.Errorf("assistant 2: %+v", m[5])
	}
	if r := m[6].Content[0]; r.ID != "call_2" || r.IsError || r.Content[0].Text != "diff --git a/x b/x" {
		t.Errorf("result 2: %+v", r)
	}
	if tr.Request(3) != nil || tr.RawRequest(-1) != nil || tr.Reply(9).Role != "" {
		t.Error("out-of-range calls")
	}
	raw := tr.RawRequest(1)
	if len(raw.Messages) != 3 || raw.Messages[1].Content[0].Text != tr.Raw[2].Content {
		t.Errorf("raw request: %+v", raw)
	}
	if u := tr.Calls[0].Usage.LLM(); u.Input != 10 || u.Output != 2 || u.Total != 12 {
		t.Errorf("usage: %+v", u)
	}
}
