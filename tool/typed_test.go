package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

type weatherIn struct {
	City  string `json:"city" jsonschema:"the city to report on"`
	Units string `json:"units,omitempty" jsonschema:"celsius or fahrenheit"`
}

func TestFuncDerivesSchemaAndRuns(t *testing.T) {
	var got weatherIn
	weather := tool.Func("get_weather", "Current weather for a city.", func(_ context.Context, in weatherIn) (string, error) {
		got = in
		return "sunny in " + in.City, nil
	})
	var schema struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(weather.Spec().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "city" ||
		!strings.Contains(string(schema.Properties["city"]), "the city to report on") {
		t.Fatalf("schema %s: want an object requiring city, described from the jsonschema tag", weather.Spec().InputSchema)
	}
	reg := tool.NewRegistry(weather)
	if err := reg.Err(); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), &tool.Env{}, llm.Block{Type: llm.BlockToolUse, ID: "c1", Name: "get_weather", Input: json.RawMessage(`{"city":"Oslo","units":"celsius"}`)})
	if res.IsError || res.Content[0].Text != "sunny in Oslo" || got != (weatherIn{City: "Oslo", Units: "celsius"}) {
		t.Fatalf("result %+v, input %+v", res, got)
	}
	// The registry validates against the derived schema before the func runs.
	got = weatherIn{}
	res = reg.Execute(context.Background(), &tool.Env{}, llm.Block{Type: llm.BlockToolUse, ID: "c2", Name: "get_weather", Input: json.RawMessage(`{"units":"kelvin"}`)})
	if !res.IsError || got != (weatherIn{}) {
		t.Fatalf("input without the required city: result %+v ran=%v; want an is_error result and no call", res, got != weatherIn{})
	}
}

func TestFuncWithUnrepresentableInputIsRefusedAtRegistration(t *testing.T) {
	bad := tool.Func("bad", "", func(context.Context, struct{ C chan int }) (string, error) { return "", nil })
	reg := tool.NewRegistry()
	err := reg.Register(bad)
	if err == nil || !strings.Contains(err.Error(), "tool bad: derive the input schema") {
		t.Fatalf("Register = %v; want the schema derivation error naming the tool", err)
	}
}
