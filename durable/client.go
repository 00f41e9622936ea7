package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	sm "github.com/strata-agent/strata/workflow"
)

// DataConverter returns the data converter the clients and workers of
// durable sessions share (client.Options.DataConverter) when the workers
// have no payload store: JSON payloads compressed with zlib
// (converter.NewZlibCodec) whenever that makes them smaller. Every
// model-call activity carries the whole request, and Temporal caps a
// payload at 2 MB by default (docs/durable.md, "what is not carried");
// conversations compress several-fold. Payloads written without it still
// decode; a claim-check reference (DataConverterWith on the workers) fails
// to decode with an error naming the setting, as it has no store to read
// from.
func DataConverter() converter.DataConverter {
	return newConverter(&claimCodec{claimState: &claimState{}})
}

// Client submits sessions and their prompts to the workers of a task queue.
// Its methods are safe for concurrent use; every error names the session.
type Client struct {
	c     client.Client
	queue string
}

// NewClient returns a Client starting session workflows on taskQueue
// through c (which the caller keeps and closes).
func NewClient(c client.Client, taskQueue string) *Client { return &Client{c: c, queue: taskQueue} }

// WorkflowID returns the workflow id of session sessionID.
func WorkflowID(sessionID string) string { return WorkflowIDPrefix + sessionID }

// newSessionID returns a random 16-hex-digit session id, as the session
// stores pick them.
func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24)
	return hex.EncodeToString(b[:])
}

// Start starts the workflow of spec's session and returns the session id:
// spec.SessionID, or a new random 16-hex-digit id when empty. A session
// whose workflow runs already is joined (nothing new starts); a stored
// session whose workflow ended is resumed from the workers' store.
func (c *Client) Start(ctx context.Context, spec Spec) (string, error) {
	if spec.SessionID == "" {
		spec.SessionID = newSessionID()
	}
	opts := client.StartWorkflowOptions{ID: WorkflowID(spec.SessionID), TaskQueue: c.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	if _, err := c.c.ExecuteWorkflow(ctx, opts, SessionWorkflowName, SessionInput{Spec: spec}); err != nil {
		return "", fmt.Errorf("durable: start session %s on task queue %s: %w", spec.SessionID, c.queue, err)
	}
	return spec.SessionID, nil
}

// Prompt runs one prompt in the session and waits for its end: the
// agent.Result, and the error it ended with (errors.Is works for
// agent.ErrMaxTurns, ErrTokenLimit, ErrDenied, ErrAborted after the trip
// through JSON). A prompt refused because another runs wraps agent.ErrBusy
// in its text.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) (*agent.Result, error) {
	return c.prompt(ctx, sessionID, PromptUpdate, text)
}

// PromptWith is Prompt with attachments (image blocks, e.g. from an ACP
// client) placed after the text in the user message.
func (c *Client) PromptWith(ctx context.Context, sessionID, text string, attachments []llm.Block) (*agent.Result, error) {
	return c.prompt(ctx, sessionID, PromptWithUpdate, PromptInput{Text: text, Attachments: attachments})
}

// prompt sends a prompt update and waits for its result.
func (c *Client) prompt(ctx context.Context, sessionID, update string, arg any) (*agent.Result, error) {
	h, err := c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: WorkflowID(sessionID), UpdateName: update,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var res PromptResult
	if err == nil {
		err = h.Get(ctx, &res)
	}
	if err != nil {
		if why := c.ended(ctx, sessionID); why != nil {
			return nil, fmt.Errorf("durable: session %s: prompt: the session workflow has ended: %w", sessionID, why)
		}
		return nil, fmt.Errorf("durable: session %s: prompt: %w", sessionID, err)
	}
	if res.MessageAt > 0 && res.Result != nil { // left out of the update's result (MaxAnswerBytes): read it from the history
		if err := c.resultMessage(ctx, sessionID, res.MessageAt-1, res.Result); err != nil {
			return res.Result, err
		}
	}
	if res.Error != nil {
		return res.Result, res.Error
	}
	return res.Result, nil
}

// ended returns why the session's workflow closed (its failure, e.g. a
// Prepare that could not open the workspace or find the stored session),
// or nil while it runs or when it cannot be asked.
func (c *Client) ended(ctx context.Context, sessionID string) error {
	d, err := c.c.DescribeWorkflowExecution(ctx, WorkflowID(sessionID), "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	if err := c.c.GetWorkflow(ctx, WorkflowID(sessionID), "").Get(ctx, nil); err != nil {
		return err
	}
	return errors.New("it ended (the end signal): start it again to prompt it")
}

// resultMessage fills r's message (and its completion tool_result) from
// message at of the session's conversation.
func (c *Client) resultMessage(ctx context.Context, sessionID string, at int, r *agent.Result) error {
	var msgs []llm.Message
	for len(msgs) < 2 {
		page, err := c.historyPage(ctx, sessionID, at+len(msgs), 0)
		if err != nil {
			return fmt.Errorf("durable: session %s: read the prompt's answer (message %d): %w", sessionID, at, err)
		}
		if page.Part != nil {
			m, err := readParts[llm.Message](page.Part, func(offset int) (*Part, error) {
				p, err := c.historyPage(ctx, sessionID, at+len(msgs), offset)
				return p.Part, err
			})
			if err != nil {
				return fmt.Errorf("durable: session %s: read the prompt's answer (message %d): %w", sessionID, at, err)
			}
			page.Messages = []llm.Message{m}
		}
		if len(page.Messages) == 0 {
			break
		}
		msgs = append(msgs, page.Messages...)
	}
	if len(msgs) == 0 || msgs[0].Role != llm.RoleAssistant {
		return fmt.Errorf("durable: session %s: the prompt's answer is not message %d of the conversation", sessionID, at)
	}
	r.Message = msgs[0]
	if r.EndedBy == "" || len(msgs) < 2 {
		return nil
	}
	for _, u := range r.Message.ToolUses() {
		if u.Name != r.EndedBy {
			continue
		}
		for _, b := range msgs[1].Content {
			if b.Type == llm.BlockToolResult && b.ID == u.ID {
				r.ToolResult = &b
			}
		}
	}
	return nil
}

// SetMode sets the approval mode (ask, allowlist, all) of the session's
// next prompts, as Session.SetMode does in process; an unknown mode is an
// error naming it.
func (c *Client) SetMode(ctx context.Context, sessionID string, m agent.Mode) error {
	h, err := c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: WorkflowID(sessionID), UpdateName: ModeUpdate,
		Args: []any{m}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("durable: session %s: set mode %q: %w", sessionID, m, err)
	}
	return nil
}

// Steer queues a steering message: added before the next model call of
// the running prompt, or of the next prompt when none runs.
func (c *Client) Steer(ctx context.Context, sessionID, text string) error {
	if err := c.c.SignalWorkflow(ctx, WorkflowID(sessionID), "", SteerSignal, text); err != nil {
		return fmt.Errorf("durable: session %s: steer: %w", sessionID, err)
	}
	return nil
}

// Pending returns the approval the session's running prompt waits for (nil
// when none); a call input that would pass MaxAnswerBytes comes with its
// long fields cut, saying how much was left out (the whole call is in the
// events and the history).
func (c *Client) Pending(ctx context.Context, sessionID string) (*agent.ApprovalRequest, error) {
	v, err := c.c.QueryWorkflow(ctx, WorkflowID(sessionID), "", PendingQuery)
	if err != nil {
		return nil, fmt.Errorf("durable: session %s: pending approval: %w", sessionID, err)
	}
	var p *agent.ApprovalRequest
	if err := v.Get(&p); err != nil {
		return nil, fmt.Errorf("durable: session %s: decode the pending approval: %w", sessionID, err)
	}
	return p, nil
}

// Approve answers the pending approval: id is its tool_use id
// (ApprovalRequest.Call.ID) or its correlation id. It fails when no
// approval is pending or id names another call.
func (c *Client) Approve(ctx context.Context, sessionID, id string, d agent.Decision) error {
	h, err := c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: WorkflowID(sessionID), UpdateName: ApproveUpdate,
		Args: []any{Approval{ID: id, Decision: d}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("durable: session %s: approve %s: %w", sessionID, id, err)
	}
	return nil
}

// Events returns the session's events from index after on (0 = from the
// first), numbered across continue-as-new runs: at most MaxEventsPerQuery
// at a time within MaxAnswerBytes, or one event that alone is larger, read
// in Parts (ask again from after+len); events of runs before the current
// one are not kept (the session store has their turns).
func (c *Client) Events(ctx context.Context, sessionID string, after int) ([]event.Event, error) {
	ask := func(offset int) (EventsPage, error) {
		v, err := c.c.QueryWorkflow(ctx, WorkflowID(sessionID), "", EventsQuery, after, offset)
		if err != nil {
			return EventsPage{}, fmt.Errorf("durable: session %s: events: %w", sessionID, err)
		}
		var page EventsPage
		if err := v.Get(&page); err != nil {
			return EventsPage{}, fmt.Errorf("durable: session %s: decode events: %w", sessionID, err)
		}
		return page, nil
	}
	page, err := ask(0)
	if err != nil || page.Part == nil {
		return page.Events, err
	}
	e, err := readParts[event.Event](page.Part, func(offset int) (*Part, error) {
		p, err := ask(offset)
		return p.Part, err
	})
	if err != nil {
		return nil, fmt.Errorf("durable: session %s: event %d: %w", sessionID, after, err)
	}
	return []event.Event{e}, nil
}

// historyPage asks HistoryQuery for the messages from index from (part
// offset offset).
func (c *Client) historyPage(ctx context.Context, sessionID string, from, offset int) (HistoryPage, error) {
	v, err := c.c.QueryWorkflow(ctx, WorkflowID(sessionID), "", HistoryQuery, from, offset)
	if err != nil {
		return HistoryPage{}, fmt.Errorf("durable: session %s: history: %w", sessionID, err)
	}
	var page HistoryPage
	if err := v.Get(&page); err != nil {
		return HistoryPage{}, fmt.Errorf("durable: session %s: decode history: %w", sessionID, err)
	}
	return page, nil
}

// History returns the conversation of the session (its loop state's
// messages: the stored history the workflow started from and what it added
// since), read in pages of MaxAnswerBytes (a message larger than that in
// Parts), waiting while its workspace is still being prepared on a worker.
// A session whose preparation failed (Spec.Resume and no such stored
// session, say) returns that error.
func (c *Client) History(ctx context.Context, sessionID string) ([]llm.Message, error) {
	for {
		page, err := c.historyPage(ctx, sessionID, 0, 0)
		if err != nil {
			return nil, err
		}
		if page.Ready {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("durable: session %s: history: the workspace is not prepared yet: %w", sessionID, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return readPaged(func(from, offset int) ([]llm.Message, *Part, bool, error) {
		page, err := c.historyPage(ctx, sessionID, from, offset)
		return page.Messages, page.Part, page.More, err
	})
}

// RunStages runs stage workflow source (package workflow's format; file
// names it in messages) with inputs in spec's session (a new one when
// spec.SessionID is empty) and waits for its end: the final state, whose
// Outcome is ok or fail. Started again for the same session and
// definition, it goes on from the stored state (the stages that reached
// Exit are not run again). It returns the session id with the state.
func (c *Client) RunStages(ctx context.Context, spec Spec, file string, source []byte, inputs map[string]string) (string, *sm.State, error) {
	if spec.SessionID == "" {
		spec.SessionID = newSessionID()
	}
	opts := client.StartWorkflowOptions{ID: stagesID(spec.SessionID), TaskQueue: c.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	run, err := c.c.ExecuteWorkflow(ctx, opts, StagesWorkflowName, StagesInput{Spec: spec, File: file, Source: string(source), Inputs: inputs})
	if err != nil {
		return spec.SessionID, nil, fmt.Errorf("durable: start stage workflow %s in session %s: %w", file, spec.SessionID, err)
	}
	var st *sm.State
	err = run.Get(ctx, &st)
	if st != nil && st.Source == "" { // left out of a large result (boundState): the source is ours
		st.Source = string(source)
	}
	if st != nil && st.Slots == nil { // too large for the result: read the whole state in Parts
		first, qerr := c.stagesState(ctx, run, 0)
		if qerr == nil {
			st, qerr = readParts[*sm.State](first, func(offset int) (*Part, error) { return c.stagesState(ctx, run, offset) })
		}
		if qerr != nil {
			return spec.SessionID, st, fmt.Errorf("durable: stage workflow %s in session %s: read its final state: %w", file, spec.SessionID, errors.Join(err, qerr))
		}
	}
	if err != nil {
		return spec.SessionID, st, fmt.Errorf("durable: stage workflow %s in session %s: %w", file, spec.SessionID, err)
	}
	return spec.SessionID, st, nil
}

// stagesState asks run's StagesStateQuery for the Part of its state from
// byte offset on.
func (c *Client) stagesState(ctx context.Context, run client.WorkflowRun, offset int) (*Part, error) {
	v, err := c.c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), StagesStateQuery, offset)
	if err != nil {
		return nil, err
	}
	var p *Part
	return p, v.Get(&p)
}

// End ends the session's workflow once no prompt runs (a pending approval
// is rejected). The stored session stays; Start resumes it.
func (c *Client) End(ctx context.Context, sessionID string) error {
	if err := c.c.SignalWorkflow(ctx, WorkflowID(sessionID), "", EndSignal, nil); err != nil {
		return fmt.Errorf("durable: session %s: end: %w", sessionID, err)
	}
	return nil
}

// StageLoopEvent is one event of a stage execution's loop (a message, a
// tool call), with the stage's name.
type StageLoopEvent struct {
	Stage string
	Event event.Event
}

// StagesWatch reads the events of a session's stage workflow as it runs
// (Client.WatchStages): what `strata workflow run` prints in process.
// Not safe for concurrent use.
type StagesWatch struct {
	c        *Client
	id       string
	parent   int
	parentAt int               // the byte offset of the parent's next Part
	parts    map[string]*parts // events arriving in Parts: "" the parent's, else a child's id + "/audit" or "/loop"
	cursors  map[string]*StageCursor
	drained  map[string]bool // ended children whose last events were read
	children []StageChild
}

// WatchStages returns a watch of session sessionID's stage workflow,
// starting at its first event.
func (c *Client) WatchStages(sessionID string) *StagesWatch {
	return &StagesWatch{c: c, id: sessionID, cursors: map[string]*StageCursor{}, drained: map[string]bool{}, parts: map[string]*parts{}}
}

// Next returns the audit events (the parent's and every stage
// execution's, ordered by time) and the stages' loop events that arrived
// since the last call. It fails when the parent's query fails (a workflow
// that has not started, no worker to answer); a stage execution whose
// query fails (its child workflow has not run yet) is asked again by the
// next call.
func (w *StagesWatch) Next(ctx context.Context) ([]sm.Event, []StageLoopEvent, error) {
	v, err := w.c.c.QueryWorkflow(ctx, stagesID(w.id), "", StagesQuery, w.parent, w.parentAt)
	if err != nil {
		return nil, nil, fmt.Errorf("durable: session %s: query the stage workflow's progress: %w", w.id, err)
	}
	var p StagesProgress
	if err := v.Get(&p); err != nil {
		return nil, nil, fmt.Errorf("durable: session %s: decode the stage workflow's progress: %w", w.id, err)
	}
	audit := p.Events
	w.parent += len(p.Events)
	if e, ok, err := takePart[sm.Event](w.parts, "", p.Part, &w.parent, &w.parentAt); err != nil {
		return nil, nil, fmt.Errorf("durable: session %s: the stage workflow's event %d: %w", w.id, w.parent, err)
	} else if ok {
		audit = append(audit, e)
	}
	w.children = p.Children
	var loop []StageLoopEvent
	for _, ch := range p.Children {
		if w.drained[ch.ID] {
			continue
		}
		cur := w.cursors[ch.ID]
		if cur == nil {
			cur = &StageCursor{}
			w.cursors[ch.ID] = cur
		}
		v, err := w.c.c.QueryWorkflow(ctx, ch.ID, "", StageEventsQuery, *cur)
		var evs StageEvents
		if err == nil {
			err = v.Get(&evs)
		}
		if err != nil { // a child that has not run yet: its events come with a later call
			continue
		}
		cur.Audit += len(evs.Audit)
		cur.Loop += len(evs.Loop)
		a, aok, err := takePart[sm.Event](w.parts, ch.ID+"/audit", evs.AuditPart, &cur.Audit, &cur.AuditOffset)
		if err != nil {
			return nil, nil, fmt.Errorf("durable: session %s: stage %s: audit event %d: %w", w.id, ch.Stage, cur.Audit, err)
		}
		l, lok, err := takePart[event.Event](w.parts, ch.ID+"/loop", evs.LoopPart, &cur.Loop, &cur.LoopOffset)
		if err != nil {
			return nil, nil, fmt.Errorf("durable: session %s: stage %s: loop event %d: %w", w.id, ch.Stage, cur.Loop, err)
		}
		w.drained[ch.ID] = ch.Done && !evs.More
		audit = append(audit, evs.Audit...)
		if aok {
			audit = append(audit, a)
		}
		for _, e := range evs.Loop {
			loop = append(loop, StageLoopEvent{Stage: ch.Stage, Event: e})
		}
		if lok {
			loop = append(loop, StageLoopEvent{Stage: ch.Stage, Event: l})
		}
	}
	slices.SortStableFunc(audit, func(a, b sm.Event) int { return a.Time.Compare(b.Time) })
	return audit, loop, nil
}

// PendingGrant is a stage's grantStageTool interaction waiting for a
// person (Spec.StageGrants): the stage execution's child workflow and
// the request.
type PendingGrant struct {
	Child   StageChild
	Request sm.GrantRequest
}

// Pending returns the grant interactions waiting in the running stage
// executions the last Next saw.
func (w *StagesWatch) Pending(ctx context.Context) []PendingGrant {
	var out []PendingGrant
	for _, ch := range w.children {
		if ch.Done {
			continue
		}
		v, err := w.c.c.QueryWorkflow(ctx, ch.ID, "", PendingGrantQuery)
		var r *sm.GrantRequest
		if err == nil {
			err = v.Get(&r)
		}
		if err == nil && r != nil { // (a child that has not run yet cannot answer)
			out = append(out, PendingGrant{Child: ch, Request: *r})
		}
	}
	return out
}

// Grant answers the pending grant g (GrantUpdate on its stage's child
// workflow). It fails when the grant is no longer pending.
func (w *StagesWatch) Grant(ctx context.Context, g PendingGrant, ans sm.GrantAnswer) error {
	h, err := w.c.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: g.Child.ID, UpdateName: GrantUpdate,
		Args: []any{Grant{ID: g.Request.Call.ID, Answer: ans}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("durable: session %s: grant %s to stage %s: %w", w.id, g.Request.Call.Name, g.Child.Stage, err)
	}
	return nil
}
