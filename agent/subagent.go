package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// SubAgentToolName is the name of the sub-agent tool.
const SubAgentToolName = "use_subagent"

// subAgentSchema is the tool's input: the task, an optional agent name and
// optional context. kiro-cli's subagent tool takes the same three things (a
// query, an agent name and relevant context); Amazon Q's older `delegate`
// tool is asynchronous and is not modelled.
const subAgentSchema = `{"type":"object","properties":{` +
	`"task":{"type":"string","description":"What the sub-agent should do, as a complete instruction."},` +
	`"agent":{"type":"string","description":"Name of the agent configuration to run (optional; default: the current agent)."},` +
	`"context":{"type":"string","description":"Relevant context the sub-agent needs (optional)."}},` +
	`"required":["task"],"additionalProperties":false}`

// NewChildFunc builds the child agent for one use_subagent call; agentName
// is the call's "agent" input ("" = the default). The child should share the
// parent's event bus so its events are observed and recorded.
type NewChildFunc func(ctx context.Context, agentName string) (*Agent, error)

// SubAgentTool returns the use_subagent tool: each call runs a child loop
// (first turn triggered by event.TriggerSubAgent) on the task and returns the
// child's final answer. The tool_result names the child loop, and the
// parent's ToolExecutionEnd event carries it as ChildLoopID (docs/turn.md,
// rule 11: sub-agent tool calls carry child_loop_id). A child that fails returns an
// is_error result with its error.
func SubAgentTool(newChild NewChildFunc) tool.Tool { return subAgent{newChild: newChild} }

// SubAgent names an agent use_subagent may delegate to, for the tool's
// description.
type SubAgent struct {
	Name        string // the name the call's "agent" input takes
	Description string // the agent file's description ("" = none)
}

// SubAgentToolFor is SubAgentTool whose description also lists the agents
// the model may name in the "agent" input (kiro's subagent tool delegates
// to the agents of toolsSettings.subagent.availableAgents), one
// "- name: description" line each, in the order given.
func SubAgentToolFor(newChild NewChildFunc, agents []SubAgent) tool.Tool {
	return subAgent{newChild: newChild, agents: agents}
}

type subAgent struct {
	newChild NewChildFunc
	agents   []SubAgent
}

func (s subAgent) Spec() llm.ToolSpec {
	d := "Run a sub-agent on a self-contained task in a fresh conversation and return its final answer. " +
		"Use it for work that needs many steps whose details the main conversation does not need."
	if len(s.agents) > 0 {
		d += "\n\nAgents you can delegate to (the \"agent\" input; omit it to run the current agent):"
		for _, a := range s.agents {
			d += "\n- " + a.Name
			if a.Description != "" {
				d += ": " + a.Description
			}
		}
	}
	return llm.ToolSpec{Name: SubAgentToolName, Description: d, InputSchema: json.RawMessage(subAgentSchema)}
}

func (s subAgent) Run(ctx context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct{ Task, Agent, Context string }
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, fmt.Errorf("use_subagent input: %w", err)
	}
	child, err := s.newChild(ctx, in.Agent)
	if err != nil {
		return tool.Result{}, fmt.Errorf("use_subagent: start agent %q: %w", in.Agent, err)
	}
	setChildLoop(ctx, child.LoopID())
	child.SetFirstTrigger(event.TriggerSubAgent)
	task := in.Task
	if in.Context != "" {
		task += "\n\nContext:\n" + in.Context
	}
	res, err := child.Prompt(ctx, task)
	if err != nil {
		return tool.Result{}, fmt.Errorf("sub-agent loop %s failed: %w", child.LoopID(), err)
	}
	text := res.Message.Text()
	if text == "" {
		text = "(the sub-agent gave no text answer)"
	}
	return tool.TextResult(fmt.Sprintf("%s\n\n[child_loop_id: %s]", text, child.LoopID())), nil
}
