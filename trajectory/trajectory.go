// Package trajectory loads recorded agent sessions so that strata can replay
// and price them. It reads mini-swe-agent trajectories (trajectory_format
// "mini-swe-agent-1", the .traj.json files described in
// shared/data/trajectories/FORMAT.md).
//
// # What a trajectory holds
//
// messages[0] is the system prompt, messages[1] the task (user), then
// (assistant, user)* pairs; every assistant message at index k is one model
// call whose request was messages[0:k] and whose recorded OpenRouter response
// (usage, created time, upstream provider) is messages[k].extra.response.
// Load returns one Call per assistant message with that usage.
//
// # Mapping to tool calls
//
// mini-swe-agent has no tools array: the model acts through one fenced
// ```bash block per reply, and the next user message is the observation. Load
// rewrites the conversation into strata's provider-neutral shape:
//
//   - An assistant message with exactly one ```bash block (mini-swe-agent's
//     regex "```bash\s*\n(.*?)\n```") becomes: a text block with the text
//     before the fence, a text block with any text after it (each only when
//     not blank, surrounding whitespace trimmed), then a tool_use block
//     {id "call_<i>" (i = 0-based call number), name "execute_bash", input
//     {"command": <block body>}}.
//   - The user message that follows it becomes one tool_result block for
//     "call_<i>" holding the whole observation text unchanged
//     (<returncode>…</returncode><output>…</output>, the "too long" warning
//     with head and tail, the timeout message, or the final submission diff).
//     IsError is set for a non-zero <returncode> and for the timeout message.
//   - An assistant message with zero or several bash blocks (mini-swe-agent
//     answers it with its format-error message, and runs nothing) stays a
//     plain text message, and so does the format-error user message after it.
//
// So every tool_use has its tool_result in the next message. The system
// prompt goes to llm.Request.System. Request(i) gives call i's request in this
// shape; RawRequest(i) gives it as recorded (one text block per message), which
// is what the provider actually saw and what ValidateGemini replays.
package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/strata-agent/strata/internal/jsonpos"
	"github.com/strata-agent/strata/llm"
)

// ToolName is the tool the fenced bash blocks are mapped to.
const ToolName = "execute_bash"

// Format is the trajectory_format value Load accepts.
const Format = "mini-swe-agent-1"

// Trajectory is one loaded session.
type Trajectory struct {
	// Path is the file it was loaded from.
	Path string
	// InstanceID is the SWE-bench instance, e.g. "astropy__astropy-12907".
	InstanceID string
	// Model is info.config.model.model_name (an OpenRouter id such as
	// "google/gemini-3-pro-preview"); when absent, the first call's model.
	Model string
	// ExitStatus is info.exit_status ("Submitted").
	ExitStatus string
	// APICalls is info.model_stats.api_calls as recorded.
	APICalls int
	// InstanceCost is info.model_stats.instance_cost (USD).
	InstanceCost float64
	// System is the system prompt (messages[0].content).
	System string
	// Raw is every message as recorded (role and content), system included.
	Raw []RawMessage
	// Messages is the conversation after the system prompt (Raw[1:]) mapped
	// to tool_use / tool_result blocks (see the package doc); Messages[j]
	// comes from Raw[j+1].
	Messages []llm.Message
	// Calls are the model calls in order.
	Calls []Call
}

// RawMessage is one recorded message: role "system", "user" or "assistant"
// and its content string.
type RawMessage struct {
	Role    string
	Content string
}

// Call is one model call.
type Call struct {
	// Index is the 0-based call number; the tool_use id is "call_<Index>".
	Index int
	// RawIndex is k, the index of the assistant message in messages[]; the
	// request was messages[0:k].
	RawIndex int
	// Completion is the assistant text as recorded.
	Completion string
	// Created is extra.response.created (Unix seconds, UTC): when the
	// upstream created the completion.
	Created time.Time
	// Provider is the upstream OpenRouter routed to ("Google",
	// "Google AI Studio").
	Provider string
	// Model is extra.response.model.
	Model string
	// Usage is extra.response.usage as recorded.
	Usage Usage
}

// Usage is the recorded usage of one call (OpenRouter chat-completion usage).
type Usage struct {
	PromptTokens     int64   // usage.prompt_tokens: all input tokens, cached included
	CompletionTokens int64   // usage.completion_tokens: output tokens, reasoning included
	CachedTokens     int64   // usage.prompt_tokens_details.cached_tokens: subset of PromptTokens
	ReasoningTokens  int64   // usage.completion_tokens_details.reasoning_tokens
	CostUSD          float64 // usage.cost (USD)
}

// LLM returns u as an llm.Usage: Input = prompt − cached, CacheRead = cached,
// Output = completion (no cache writes: Gemini implicit caching reports none).
func (u Usage) LLM() llm.Usage {
	return llm.Usage{
		Input:     u.PromptTokens - u.CachedTokens,
		CacheRead: u.CachedTokens,
		Output:    u.CompletionTokens,
		Reasoning: u.ReasoningTokens,
	}.WithTotal()
}

type fileJSON struct {
	TrajectoryFormat *string           `json:"trajectory_format"`
	InstanceID       string            `json:"instance_id"`
	Messages         []json.RawMessage `json:"messages"`
	Info             struct {
		ExitStatus string `json:"exit_status"`
		ModelStats struct {
			InstanceCost float64 `json:"instance_cost"`
			APICalls     int     `json:"api_calls"`
		} `json:"model_stats"`
		Config struct {
			Model struct {
				ModelName string `json:"model_name"`
			} `json:"model"`
		} `json:"config"`
	} `json:"info"`
}

type messageJSON struct {
	Role    *string `json:"role"`
	Content *string `json:"content"`
	Extra   *struct {
		Response *struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
			Created  int64  `json:"created"`
			Usage    *struct {
				PromptTokens        int64   `json:"prompt_tokens"`
				CompletionTokens    int64   `json:"completion_tokens"`
				Cost                float64 `json:"cost"`
				PromptTokensDetails struct {
					CachedTokens int64 `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
				CompletionTokensDetails struct {
					ReasoningTokens int64 `json:"reasoning_tokens"`
				} `json:"completion_tokens_details"`
			} `json:"usage"`
		} `json:"response"`
	} `json:"extra"`
}

// Load reads a mini-swe-agent .traj.json file. Errors name the file, the
// line and column, and the JSON path, e.g.
// "x.traj.json:88:5: messages[4].extra.response.usage: missing"; a file
// that was read but is not a valid trajectory gives a *MalformedError
// (errors.Is ErrMalformed).
// It checks the format tag, that messages[0] is the system prompt, that roles
// are system/user/assistant, and that every assistant message carries its
// response usage with cached ≤ prompt tokens.
func Load(path string) (*Trajectory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load on bytes already read; name is used in errors and as Path.
func Parse(name string, data []byte) (*Trajectory, error) {
	var offsets []int // of messages[k], found only once an error needs them
	fail := func(where, format string, a ...any) error {
		e := &MalformedError{File: name, Where: where, Err: fmt.Errorf(format, a...)}
		if k, ok := messageIndex(where); ok {
			if offsets == nil {
				offsets = messageOffsets(data)
			}
			if k < len(offsets) {
				p := jsonpos.At(data, offsets[k])
				e.Line, e.Column = p.Line, p.Column
			}
		}
		return e
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, syntaxError(name, data, 0, data, err)
	}
	if f.TrajectoryFormat == nil {
		return nil, fail("trajectory_format", "missing")
	}
	if *f.TrajectoryFormat != Format {
		return nil, fail("trajectory_format", "%q, want %q", *f.TrajectoryFormat, Format)
	}
	if len(f.Messages) == 0 {
		return nil, fail("messages", "empty")
	}
	t := &Trajectory{
		Path:         name,
		InstanceID:   f.InstanceID,
		Model:        f.Info.Config.Model.ModelName,
		ExitStatus:   f.Info.ExitStatus,
		APICalls:     f.Info.ModelStats.APICalls,
		InstanceCost: f.Info.ModelStats.InstanceCost,
		Raw:          make([]RawMessage, 0, len(f.Messages)),
	}
	for k, raw := range f.Messages {
		where := fmt.Sprintf("messages[%d]", k)
		var m messageJSON
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&m); err != nil {
			if offsets == nil {
				offsets = messageOffsets(data)
			}
			if k < len(offsets) {
				e := syntaxError(name, data, offsets[k], raw, err)
				e.Where = where
				return nil, e
			}
			return nil, fail(where, "%v", err)
		}
		if m.Role == nil {
			return nil, fail(where+".role", "missing")
		}
		if m.Content == nil {
			return nil, fail(where+".content", "missing or not a string")
		}
		role := *m.Role
		switch {
		case k == 0 && role != "system":
			return nil, fail(where+".role", "%q, want \"system\" first", role)
		case k > 0 && role != "user" && role != "assistant":
			return nil, fail(where+".role", "%q, want \"user\" or \"assistant\"", role)
		}
		t.Raw = append(t.Raw, RawMessage{Role: role, Content: *m.Content})
		if role != "assistant" {
			continue
		}
		if m.Extra == nil || m.Extra.Response == nil {
			return nil, fail(where+".extra.response", "missing")
		}
		resp := m.Extra.Response
		if resp.Usage == nil {
			return nil, fail(where+".extra.response.usage", "missing")
		}
		u := resp.Usage
		if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.PromptTokensDetails.CachedTokens < 0 ||
			u.PromptTokensDetails.CachedTokens > u.PromptTokens {
			return nil, fail(where+".extra.response.usage", "prompt_tokens %d, cached_tokens %d, completion_tokens %d: want 0 ≤ cached ≤ prompt",
				u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens)
		}
		t.Calls = append(t.Calls, Call{
			Index:      len(t.Calls),
			RawIndex:   k,
			Completion: *m.Content,
			Created:    time.Unix(resp.Created, 0).UTC(),
			Provider:   resp.Provider,
			Model:      resp.Model,
			Usage: Usage{
				PromptTokens:     u.PromptTokens,
				CompletionTokens: u.CompletionTokens,
				CachedTokens:     u.PromptTokensDetails.CachedTokens,
				ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
				CostUSD:          u.Cost,
			},
		})
	}
	if t.Model == "" && len(t.Calls) > 0 {
		t.Model = t.Calls[0].Model
	}
	t.System = t.Raw[0].Content
	t.Messages = convert(t.Raw[1:], t.Calls)
	return t, nil
}

// bashRE is mini-swe-agent v1.15.0's action regex (DefaultAgent.parse_action).
var bashRE = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")

var returnCodeRE = regexp.MustCompile(`^\s*<returncode>(-?\d+)</returncode>`)

// convert maps the recorded messages after the system prompt to llm messages
// with tool_use / tool_result pairs (see the package doc). calls gives the
// call number of each assistant message.
func convert(raw []RawMessage, calls []Call) []llm.Message {
	callAt := map[int]int{} // raw index (in messages[]) → call number
	for _, c := range calls {
		callAt[c.RawIndex] = c.Index
	}
	out := make([]llm.Message, 0, len(raw))
	pending := "" // tool_use id awaiting its result in the next message
	for j, m := range raw {
		k := j + 1 // index in messages[]
		if m.Role == "assistant" {
			pending = ""
			matches := bashRE.FindAllStringSubmatchIndex(m.Content, -1)
			if len(matches) != 1 || j+1 >= len(raw) || raw[j+1].Role != "user" {
				out = append(out, llm.AssistantText(m.Content))
				continue
			}
			loc := matches[0]
			id := "call_" + strconv.Itoa(callAt[k])
			var blocks []llm.Block
			if s := strings.TrimSpace(m.Content[:loc[0]]); s != "" {
				blocks = append(blocks, llm.TextBlock(s))
			}
			if s := strings.TrimSpace(m.Content[loc[1]:]); s != "" {
				blocks = append(blocks, llm.TextBlock(s))
			}
			blocks = append(blocks, llm.ToolUseBlock(id, ToolName, commandJSON(m.Content[loc[2]:loc[3]])))
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: blocks})
			pending = id
			continue
		}
		if pending != "" {
			out = append(out, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
				llm.ToolResultBlock(pending, m.Content, isErrorObservation(m.Content)),
			}})
			pending = ""
			continue
		}
		out = append(out, llm.UserText(m.Content))
	}
	return out
}

// commandJSON returns {"command": cmd} without HTML escaping, so the bytes
// stay as the model wrote them.
func commandJSON(cmd string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"command": cmd}) // a map of strings always encodes
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n"))
}

// isErrorObservation reports a non-zero return code or mini-swe-agent's
// timeout message.
func isErrorObservation(s string) bool {
	if strings.HasPrefix(s, "The last command <command>") {
		return true
	}
	if m := returnCodeRE.FindStringSubmatch(s); m != nil {
		return m[1] != "0"
	}
	return false
}

// Request returns call i's request in strata's shape: the system prompt as
// one system block and the mapped conversation up to (not including) the
// call's reply. It returns nil for an i out of range.
func (t *Trajectory) Request(i int) *llm.Request {
	if i < 0 || i >= len(t.Calls) {
		return nil
	}
	n := t.Calls[i].RawIndex - 1
	return &llm.Request{
		Model:    t.Model,
		System:   []llm.Block{llm.TextBlock(t.System)},
		Messages: t.Messages[:n:n],
	}
}

// Reply returns call i's reply in strata's shape (the mapped assistant
// message), or the zero Message for an i out of range.
func (t *Trajectory) Reply(i int) llm.Message {
	if i < 0 || i >= len(t.Calls) {
		return llm.Message{}
	}
	return t.Messages[t.Calls[i].RawIndex-1]
}

// RawRequest returns call i's request as recorded: the system prompt as one
// system block, then one text block per message of messages[1:k]. It returns
// nil for an i out of range.
func (t *Trajectory) RawRequest(i int) *llm.Request {
	if i < 0 || i >= len(t.Calls) {
		return nil
	}
	k := t.Calls[i].RawIndex
	msgs := make([]llm.Message, 0, k-1)
	for _, m := range t.Raw[1:k] {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Message{Role: role, Content: []llm.Block{llm.TextBlock(m.Content)}})
	}
	return &llm.Request{Model: t.Model, System: []llm.Block{llm.TextBlock(t.System)}, Messages: msgs}
}

// Observed returns the recorded usage summed over all calls.
func (t *Trajectory) Observed() Usage {
	var s Usage
	for _, c := range t.Calls {
		s.PromptTokens += c.Usage.PromptTokens
		s.CompletionTokens += c.Usage.CompletionTokens
		s.CachedTokens += c.Usage.CachedTokens
		s.ReasoningTokens += c.Usage.ReasoningTokens
		s.CostUSD += c.Usage.CostUSD
	}
	return s
}
