package acp

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/mcp"
)

// fakePrompts is a PromptSource with fixed servers and prompts; GetPrompt
// echoes the prompt name and its arguments, in key order.
type fakePrompts struct {
	statuses []mcp.Status
	prompts  map[string][]mcp.Prompt
	calls    []string
}

func (f *fakePrompts) Statuses() []mcp.Status { return f.statuses }

func (f *fakePrompts) GetPrompts(_ context.Context, server string) ([]mcp.Prompt, error) {
	if ps, ok := f.prompts[server]; ok {
		return ps, nil
	}
	return nil, errors.New("prompts/list failed")
}

func (f *fakePrompts) GetPrompt(_ context.Context, server, name string, args map[string]string) ([]llm.Message, error) {
	var kv []string
	for _, k := range []string{"city", "lang", "style"} {
		if v, ok := args[k]; ok {
			kv = append(kv, k+"="+v)
		}
	}
	f.calls = append(f.calls, server+"/"+name)
	return []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(name + " " + strings.Join(kv, ","))}}}, nil
}

// Running servers' prompts become commands; a name two servers share is
// qualified with the server; servers not running or failing to list are
// left out; hints name the arguments; expansion fills arguments and checks
// required ones.
func TestCommandsFromMCPPrompts(t *testing.T) {
	weather := mcp.Prompt{Name: "weather", Description: "the weather", Arguments: []mcp.PromptArgument{{Name: "city", Required: true}}}
	review := mcp.Prompt{Name: "review", Arguments: []mcp.PromptArgument{{Name: "lang", Required: true}, {Name: "style"}}}
	src := &fakePrompts{
		statuses: []mcp.Status{{Name: "a", State: mcp.Running}, {Name: "b", State: mcp.Running}, {Name: "down", State: mcp.Crashed}, {Name: "broken", State: mcp.Running}},
		prompts:  map[string][]mcp.Prompt{"a": {weather, review}, "b": {review}, "down": {weather}},
	}
	cmds := commands(context.Background(), []PromptSource{src})
	names := slices.Sorted(maps.Keys(cmds))
	if want := []string{"a___review", "b___review", "weather"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("commands %v; want %v", names, want)
	}
	list := availableCommands(cmds).AvailableCommandsUpdate.AvailableCommands
	if len(list) != 5 || list[3].Name != "agent" || list[4].Name != "workflow" || list[2].Name != "weather" || list[2].Description != "the weather (MCP prompt of a)" ||
		list[2].Input.Unstructured.Hint != "city" || list[0].Input.Unstructured.Hint != "lang=… [style=…]" {
		t.Errorf("available commands %+v", list)
	}
	for _, c := range []struct {
		text, want, wantErr string
		isCmd               bool
	}{
		{"/weather Paris in spring", "weather city=Paris in spring", "", true},
		{"/a___review lang=go style=terse", "review lang=go,style=terse", "", true},
		{"/b___review style=terse", "", `missing required argument "lang" (arguments: lang=… [style=…])`, true},
		{"/b___review go", "", `argument "go" is not name=value`, true},
		{"/unknown x", "", "", false},
		{"weather Paris", "", "", false},
	} {
		got, isCmd, err := expand(context.Background(), cmds, c.text)
		if got != c.want || isCmd != c.isCmd || (c.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("expand(%q) = %q, %v, %v; want %q, %v, error %q", c.text, got, isCmd, err, c.want, c.isCmd, c.wantErr)
		}
	}
	if want := []string{"a/weather", "a/review"}; !reflect.DeepEqual(src.calls, want) {
		t.Errorf("prompts/get calls %v; want %v", src.calls, want)
	}
}
