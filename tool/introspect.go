package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/llm"
)

//go:embed introspect.md
var introspectDescription string

// Introspect is kiro's introspect tool (input schema specs/introspect.json,
// unchanged from kiro): it answers questions about the agent runtime itself
// from its own documentation. kiro answers from Q CLI's docs; strata's
// answer is whatever Answer returns — the runtime gives the running agent's
// configuration and the sections of strata's README that match the query.
// Safe for concurrent use when Answer is.
type Introspect struct {
	// Answer returns the documentation for query ("" = an overview). nil
	// makes every call an error saying introspection is not configured.
	Answer func(ctx context.Context, query string) (string, error)
}

// Spec returns introspect's spec: kiro's input schema, introspect.md as
// description.
func (*Introspect) Spec() llm.ToolSpec { return cachedSpec("introspect", introspectDescription) }

// Run returns Answer(query).
func (t *Introspect) Run(ctx context.Context, _ *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("introspect: input: %w", err)
	}
	if t.Answer == nil {
		return Result{}, fmt.Errorf("introspect: no documentation source is configured")
	}
	s, err := t.Answer(ctx, in.Query)
	if err != nil {
		return Result{}, fmt.Errorf("introspect: %w", err)
	}
	return TextResult(s), nil
}
