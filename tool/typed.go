package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/strata-agent/strata/llm"
)

// Func returns a tool named name whose input is the Go type In: its JSON
// Schema is derived from In with github.com/google/jsonschema-go's For (field
// names from `json` tags; a field's description from its `jsonschema` tag;
// fields without `omitempty`/`omitzero` are required), the model's input is
// validated against that schema by the Registry and decoded into an In, and
// fn's string is returned to the model as a text tool_result (an error as an
// is_error tool_result).
//
// When no schema can be derived from In (e.g. a channel or func field), the
// tool still constructs but Registry.Register refuses it with that error, so
// the mistake surfaces when the tool is registered (strata.Open fails with
// it), never as a panic.
func Func[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) Tool {
	spec, err := inputSpec[In](name, description)
	return &funcTool[In]{spec: spec, fn: fn, err: err}
}

// inputSpec is the spec of a tool whose input is the Go type In: its JSON
// Schema derived with jsonschema.For. When none can be derived the schema is
// an empty object and the error names the tool and the type (Func, Typed).
func inputSpec[In any](name, description string) (llm.ToolSpec, error) {
	spec := llm.ToolSpec{Name: name, Description: description}
	s, err := jsonschema.For[In](nil)
	if err == nil {
		spec.InputSchema, err = json.Marshal(s)
	}
	if err != nil {
		spec.InputSchema = json.RawMessage(`{"type":"object"}`)
		return spec, fmt.Errorf("tool %s: derive the input schema from %T: %w", name, *new(In), err)
	}
	return spec, nil
}

type funcTool[In any] struct {
	spec llm.ToolSpec
	fn   func(context.Context, In) (string, error)
	err  error
}

func (t *funcTool[In]) Spec() llm.ToolSpec { return t.spec }

// specErr reports why the tool cannot be registered (see Func).
func (t *funcTool[In]) specErr() error { return t.err }

func (t *funcTool[In]) Run(ctx context.Context, _ *Env, input json.RawMessage) (Result, error) {
	if t.err != nil {
		return Result{}, t.err
	}
	var in In
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return Result{}, fmt.Errorf("%s input: %w", t.spec.Name, err)
		}
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return Result{}, err
	}
	return TextResult(out), nil
}
