package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/llm"
)

//go:embed knowledge.md
var knowledgeDescription string

// KnowledgeIndex is what the knowledge tool searches: the agent's indexed
// knowledge bases (package knowledge implements it). Implementations must
// be safe for concurrent use.
type KnowledgeIndex interface {
	// Show lists the indexed contexts (ids, names, sizes), as text.
	Show() string
	// SearchText returns the best matches for query as text, in every
	// context or only in contextRef (an id or a name); an unknown context
	// or a query without words is an error naming it.
	SearchText(ctx context.Context, query, contextRef string) (string, error)
}

// Knowledge is kiro's knowledge tool (input schema specs/knowledge.json,
// unchanged from kiro) over the agent's knowledge bases: "show" lists the
// indexed contexts and "search" runs a full-text search. kiro's other
// commands (add, remove, clear, update, status, cancel) edit a persistent
// store kiro keeps per agent; strata's bases are the agent file's
// knowledgeBase resources, indexed when the agent loads, so those commands
// return an error saying so.
type Knowledge struct {
	Index KnowledgeIndex
}

// Spec returns knowledge's spec: kiro's input schema, knowledge.md as
// description.
func (*Knowledge) Spec() llm.ToolSpec { return cachedSpec("knowledge", knowledgeDescription) }

// Run runs one command.
func (k *Knowledge) Run(ctx context.Context, _ *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Command   string `json:"command"`
		Query     string `json:"query"`
		ContextID string `json:"context_id"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("knowledge: input: %w", err)
	}
	if k.Index == nil {
		return Result{}, fmt.Errorf("knowledge: this agent has no knowledge bases (add knowledgeBase resources to its agent file)")
	}
	switch in.Command {
	case "show":
		return TextResult(k.Index.Show()), nil
	case "search":
		if in.Query == "" {
			return Result{}, fmt.Errorf("knowledge: search needs \"query\"")
		}
		s, err := k.Index.SearchText(ctx, in.Query, in.ContextID)
		if err != nil {
			return Result{}, err
		}
		return TextResult(s), nil
	case "status":
		return TextResult("No background operations: every knowledge base was indexed when the agent loaded."), nil
	default:
		return Result{}, fmt.Errorf("knowledge: command %q is not supported by strata: its knowledge bases are the agent file's "+
			"knowledgeBase resources, indexed when the agent loads (use \"show\" or \"search\"; change the bases in the agent file)", in.Command)
	}
}
