// Package durable runs strata sessions as Temporal workflows
// (go.temporal.io/sdk): the step engine's state lives in the workflow, each
// model call and each tool call is an activity on a worker, prompts and
// approvals arrive as updates, steering as a signal, and long sessions
// continue-as-new with their state (docs/durable.md).
//
// A worker registers the workflow and activities with Register; a program
// submits sessions and prompts through a Client. The workflow code drives
// agent.Engine, the same step machine every in-process driver uses, so a
// durable session sends the same requests as Session.Prompt.
package durable

import (
	"encoding/json"
	"time"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/compact"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

// Names of the workflow, its activities, updates, signals and queries as
// registered on a worker (Register) and used by Client.
const (
	// SessionWorkflowName is the session workflow's type name.
	SessionWorkflowName = "strata.Session"
	// Activity type names.
	PrepareActivity   = "strata.Prepare"
	ModelCallActivity = "strata.ModelCall"
	ToolCallActivity  = "strata.ToolCall"
	RecordActivity    = "strata.Record"
	// PromptUpdate runs one prompt (argument: the prompt text) and returns
	// its PromptResult when the loop is done.
	PromptUpdate = "prompt"
	// PromptWithUpdate is PromptUpdate with attachments (argument:
	// PromptInput).
	PromptWithUpdate = "prompt_with"
	// ModeUpdate sets the approval mode of the session's next prompts
	// (argument: agent.Mode), as Session.SetMode does.
	ModeUpdate = "mode"
	// ApproveUpdate answers the pending approval (argument: Approval).
	ApproveUpdate = "approve"
	// SteerSignal queues a steering message (argument: the text).
	SteerSignal = "steer"
	// EndSignal ends the session workflow once no prompt runs (no
	// argument); a pending approval is rejected.
	EndSignal = "end"
	// EventsQuery returns an EventsPage: the events from an index on
	// (arguments: the index, and the byte offset of a Part), at most
	// MaxEventsPerQuery of them and MaxAnswerBytes of JSON.
	EventsQuery = "events"
	// HistoryQuery returns a HistoryPage: the conversation's messages from
	// an index on (arguments: the index, and the byte offset of a Part), at
	// most MaxMessagesPerQuery of them and MaxAnswerBytes of JSON.
	HistoryQuery = "history"
	// PendingQuery returns the pending approval (*agent.ApprovalRequest,
	// nil when none; a call input that would pass MaxAnswerBytes is left
	// out, saying so).
	PendingQuery = "pending"
	// WorkflowIDPrefix prefixes a session's workflow id: the workflow of
	// session S is "strata-session-S".
	WorkflowIDPrefix = "strata-session-"
)

// Spec is what a session workflow needs to open the same workspace on any
// worker: plain JSON, never a secret (API keys come from the worker's
// environment or its WorkerOptions). The zero value of each field takes
// the worker's WorkerOptions.Options value.
type Spec struct {
	// SessionID is the stored session's id ("" = Client.Start picks one).
	SessionID string `json:"session_id,omitempty"`
	// Dir is the workspace directory on the workers.
	Dir string `json:"dir,omitempty"`
	// Agent is a kiro agent name or file (strata.Options.Agent).
	Agent string `json:"agent,omitempty"`
	// Provider and Model choose the provider by name and the model id.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Layout is the request layout's registered name.
	Layout string `json:"layout,omitempty"`
	// Mode is the approval mode (ask, allowlist, all).
	Mode agent.Mode `json:"mode,omitempty"`
	// MaxTurns is the continuation limit per prompt, in rounds; 0 = the
	// workspace's.
	MaxTurns int `json:"max_turns,omitempty"`
	// MaxSessionTokens caps the conversation's tokens (0 = the
	// workspace's).
	MaxSessionTokens int64 `json:"max_session_tokens,omitempty"`
	// Title names a new stored session.
	Title string `json:"title,omitempty"`
	// Resume says the session must already be in the workers' store
	// (ACP session/load): Prepare fails naming it instead of creating it.
	Resume bool `json:"resume,omitempty"`
	// PromptsPerRun is how many prompts one workflow run serves before it
	// continues as new with its state (0 = DefaultPromptsPerRun); it also
	// continues as new when Temporal suggests it (history size).
	PromptsPerRun int `json:"prompts_per_run,omitempty"`
	// ToolTimeout bounds one attempt of a tool call (0 = ToolTimeout).
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// ToolHeartbeat is the heartbeat timeout of tool and model calls: a
	// worker silent that long is taken as lost (0 = ToolHeartbeat). Running
	// calls heartbeat four times per timeout.
	ToolHeartbeat time.Duration `json:"tool_heartbeat,omitempty"`
	// StageGrants says a person answers the grantStageTool interactions
	// of a stage workflow's stages (a call outside a stage's allowedTools
	// that no token covers): the stage waits for the GrantUpdate of its
	// child workflow (StagesWatch.Pending, StagesWatch.Grant). false = no
	// interactor: such calls are blocked as GrantDenied at once.
	StageGrants bool `json:"stage_grants,omitempty"`
}

// MaxMessagesPerQuery bounds the messages one HistoryQuery returns (and
// MaxAnswerBytes their JSON); ask again from the next index.
const MaxMessagesPerQuery = 100

// HistoryPage is HistoryQuery's answer.
type HistoryPage struct {
	// Ready is false until the session's workspace is prepared on a
	// worker (its stored history is read then): ask again.
	Ready bool `json:"ready"`
	// Messages are the conversation's messages from the index asked for.
	Messages []llm.Message `json:"messages,omitempty"`
	// Part is a piece of the JSON of the message at the index asked for,
	// when it alone is over MaxAnswerBytes (Messages is then empty).
	Part *Part `json:"part,omitempty"`
	// More says messages remain after these.
	More bool `json:"more,omitempty"`
}

// MaxEventsPerQuery bounds the events one EventsQuery returns (and
// MaxAnswerBytes their JSON); ask again from the next index.
const MaxEventsPerQuery = 1000

// DefaultPromptsPerRun is Spec.PromptsPerRun's default.
const DefaultPromptsPerRun = 20

// key is the spec's workspace identity: the fields that decide which
// workspace a worker opens (the session id and title do not).
func (s Spec) key() string {
	k := s
	k.SessionID, k.Title, k.PromptsPerRun, k.ToolTimeout, k.ToolHeartbeat, k.StageGrants, k.Resume = "", "", 0, 0, 0, false, false
	b, _ := json.Marshal(k)
	return string(b)
}

// options returns the strata.Options for s on top of the worker's template.
func (s Spec) options(t strata.Options) strata.Options {
	o := t
	if s.Dir != "" {
		o.Dir = s.Dir
	}
	if s.Agent != "" {
		o.Agent = s.Agent
	}
	if s.Provider != "" {
		o.ProviderName = s.Provider
	}
	if s.Model != "" {
		o.Model = s.Model
	}
	if s.Layout != "" {
		o.Layout = s.Layout
	}
	if s.Mode != "" {
		o.Mode = s.Mode
	}
	if s.MaxTurns != 0 {
		o.MaxTurns = s.MaxTurns
	}
	if s.MaxSessionTokens != 0 {
		o.MaxSessionTokens = s.MaxSessionTokens
	}
	return o
}

// Blueprint is the serialisable part of a session's agent.Config, as the
// Prepare activity reads it on a worker: what the workflow needs to build
// an agent.Engine that composes the same requests. Everything that does
// I/O stays on the workers (docs/durable.md, "what runs where").
type Blueprint struct {
	SessionID string `json:"session_id"`
	// Provider and API are the worker provider's name and wire API (events
	// and prompt.Context.API).
	Provider string  `json:"provider"`
	API      llm.API `json:"api"`
	Model    string  `json:"model"`
	Params   llm.Params
	// Context is the template of every turn's prompt.Context.
	Context prompt.Context `json:"context"`
	// Layout is the layout's registered name (prompt.Lookup).
	Layout string `json:"layout"`
	// Tools are the registered tools' specs and traits, sorted by name;
	// AllowedAll says the agent allows every tool (else Allowed says).
	Tools      []ToolBlueprint `json:"tools"`
	AllowedAll bool            `json:"allowed_all"`
	// MaxTurns, MaxSessionTokens, Mode and ContextWindow are the Config's.
	MaxTurns         int   `json:"max_turns"`
	MaxSessionTokens int64 `json:"max_session_tokens"`
	// MaxCallsPerResponse and MaxSubAgentsPerResponse are the Config's
	// per-response caps, enforced in the workflow from the response alone
	// (so exact whichever workers run the calls).
	MaxCallsPerResponse     int        `json:"max_calls_per_response,omitempty"`
	MaxSubAgentsPerResponse int        `json:"max_sub_agents_per_response,omitempty"`
	Mode                    agent.Mode `json:"mode"`
	ContextWindow           int        `json:"context_window"`
	// Compaction is the compaction policy's thresholds when the workspace
	// has one the workflow can run (any but one with its own token
	// counter); nil = none. Summarize says its tl;drs are written
	// (SummarizeActivity).
	Compaction *Compaction `json:"compaction,omitempty"`
	Summarize  bool        `json:"summarize,omitempty"`
	// Hooks are the worker's hooks the workflow runs through HookActivity
	// (all but tool_call's); HookStates are the stateful ones' states by
	// index (decimal), as the session's last call left them (carried over
	// a continue-as-new with the Blueprint).
	Hooks      []HookBlueprint            `json:"hooks,omitempty"`
	HookStates map[string]json.RawMessage `json:"hook_states,omitempty"`
	// Gather, BeforeTurn and AfterTurn say the worker's Config has them
	// (GatherActivity, TurnActivity).
	Gather     bool `json:"gather,omitempty"`
	BeforeTurn bool `json:"before_turn,omitempty"`
	AfterTurn  bool `json:"after_turn,omitempty"`
	// State is the session's loop state when the workflow started (a new
	// session's is empty; a resumed one's carries its history).
	State agent.State `json:"state"`
	// KeepAlive is the worker's keep-alive ask for the session
	// (strata.Options.KeepAlive; nil = no pings): the workflow pings
	// between model calls (docs/durable.md, "Keep-alive pings").
	KeepAlive *KeepAlive `json:"keep_alive,omitempty"`
	// NotCarried names the parts of the worker's Config the workflow
	// cannot run (a token counter of its own): announced as a Progress
	// event when the session starts.
	NotCarried []string `json:"not_carried,omitempty"`
}

// Compaction is a compaction policy's thresholds (compact.Policy, whose
// summariser and counter are functions and stay out).
type Compaction struct {
	ChunkMinMessages int `json:"chunk_min_messages"`
	ChunkMinTokens   int `json:"chunk_min_tokens"`
	KeepMinMessages  int `json:"keep_min_messages"`
	KeepMinTokens    int `json:"keep_min_tokens"`
}

// policy returns c as a compact.Policy (nil for nil).
func (c *Compaction) policy() *compact.Policy {
	if c == nil {
		return nil
	}
	return &compact.Policy{ChunkMinMessages: c.ChunkMinMessages, ChunkMinTokens: c.ChunkMinTokens,
		KeepMinMessages: c.KeepMinMessages, KeepMinTokens: c.KeepMinTokens}
}

// ToolBlueprint is one tool as the workflow knows it: its spec, its traits
// (the retry policy of its calls) and whether the agent allows it.
type ToolBlueprint struct {
	Spec    llm.ToolSpec `json:"spec"`
	Traits  tool.Traits  `json:"traits"`
	Allowed bool         `json:"allowed"`
}

// blueprint reads the serialisable parts of cfg.
func blueprint(id string, cfg agent.Config, st agent.State) Blueprint {
	pc := cfg.Context
	pc.Counter = nil
	b := Blueprint{SessionID: id, Provider: cfg.Provider.Name(), API: cfg.Provider.API(), Model: cfg.Model, Params: cfg.Params,
		Context: pc, Layout: cfg.Layout.Name(), AllowedAll: cfg.AllowedTool == nil, MaxTurns: cfg.MaxTurns,
		MaxSessionTokens: cfg.MaxSessionTokens, Mode: cfg.Mode, ContextWindow: cfg.ContextWindow, State: st,
		MaxCallsPerResponse: cfg.MaxCallsPerResponse, MaxSubAgentsPerResponse: cfg.MaxSubAgentsPerResponse}
	for _, sp := range cfg.Tools.Specs() {
		b.Tools = append(b.Tools, ToolBlueprint{Spec: sp, Traits: cfg.Tools.Traits(sp.Name),
			Allowed: cfg.AllowedTool == nil || cfg.AllowedTool(sp.Name)})
	}
	var nc []string
	b.Hooks = hookBlueprints(cfg)
	b.Gather, b.BeforeTurn, b.AfterTurn = cfg.Gather != nil, cfg.BeforeTurn != nil, cfg.AfterTurn != nil
	if p := cfg.Compaction; carriedCompaction(p) {
		b.Compaction = &Compaction{p.ChunkMinMessages, p.ChunkMinTokens, p.KeepMinMessages, p.KeepMinTokens}
		b.Summarize = p.Summarize != nil
	} else if p != nil {
		nc = append(nc, "compaction with its own token counter")
	}
	if cfg.Counter != nil {
		nc = append(nc, "the context-window check's own token counter (Config.Counter)")
	}
	b.NotCarried = nc
	return b
}

// Verdict is the worker's authority decision for one tool_use of a
// response (the Config's AllowedTool, Denied and PreApproved, which may
// read files): the workflow's Config looks them up.
type Verdict struct {
	Allowed     bool   `json:"allowed"`
	Denied      string `json:"denied,omitempty"`
	PreApproved bool   `json:"pre_approved,omitempty"`
	// Person says the call needs a person's approval of its own
	// (Workspace.PersonOnly): an "allow always" never covers it.
	Person bool `json:"person,omitempty"`
}

// PromptInput is a prompt with attachments (PromptWithUpdate): image
// blocks placed after the text in the user message, as
// agent.Agent.PromptWith places them; Text may be empty when there are
// attachments.
type PromptInput struct {
	Text        string      `json:"text"`
	Attachments []llm.Block `json:"attachments,omitempty"`
}

// Approval answers the pending approval (ApproveUpdate).
type Approval struct {
	// ID is the pending call's tool_use id (ApprovalRequest.Call.ID) or
	// the prompt's correlation id.
	ID       string         `json:"id"`
	Decision agent.Decision `json:"decision"`
}

// PromptResult is what PromptUpdate returns: the prompt's result and the
// error it ended with (Error's text, Kind one of agent.StepError's kinds).
// A result whose JSON would pass MaxAnswerBytes comes without its message
// and completion tool_result: MessageAt is then the message's index in the
// conversation plus one (HistoryQuery), and Client.Prompt reads them there.
type PromptResult struct {
	Result    *agent.Result    `json:"result,omitempty"`
	Error     *agent.StepError `json:"error,omitempty"`
	MessageAt int              `json:"message_at,omitempty"`
}
