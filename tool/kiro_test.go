package tool

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// The kiro tools' input schemas must equal kiro's tool_index.json, so real
// agent configs and recorded model calls work unchanged.
func TestKiroSchemasMatchToolIndex(t *testing.T) {
	raw, err := os.ReadFile(shared.Path(t, "data/agents/amazon-q-developer-cli/tool-index/tool_index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index map[string]struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	specs := map[string]Tool{"fs_read": &FSRead{}, "fs_write": &FSWrite{}, "execute_bash": &ExecuteBash{}, "todo_list": &TodoList{},
		"knowledge": &Knowledge{}, "thinking": Thinking{}, "introspect": &Introspect{}}
	for name, tl := range specs {
		kiro, ok := index[name]
		if !ok {
			t.Fatalf("tool_index.json has no %s", name)
		}
		var want, got any
		if err := json.Unmarshal(kiro.InputSchema, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(tl.Spec().InputSchema, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s input_schema differs from kiro's tool_index.json:\n got %s\nwant %s", name, tl.Spec().InputSchema, kiro.InputSchema)
		}
		if tl.Spec().Name != kiro.Name {
			t.Errorf("name %q, kiro %q", tl.Spec().Name, kiro.Name)
		}
	}
}

// Every embedded spec file loads, and the descriptions are the .md files.
func TestEmbeddedSpecsLoad(t *testing.T) {
	for _, tl := range Builtins() {
		s := tl.Spec()
		if _, err := loadSchema(s.Name); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if _, err := compileSchema(s.InputSchema); err != nil {
			t.Errorf("%s: schema does not compile: %v", s.Name, err)
		}
	}
	if d := (&Glob{}).Spec().Description; d != trimmed(globDescription) {
		t.Errorf("glob description is not glob.md")
	}
}

func trimmed(s string) string { return strings.TrimSpace(s) }
