package tool

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/strata-agent/strata/llm"
)

// specFiles holds the input schemas of the built-in tools. fs_read.json,
// fs_write.json, execute_bash.json and todo_list.json are the Amazon Q
// Developer CLI's tool_index.json entries, unchanged (aws/amazon-q-developer-cli,
// crates/chat-cli/src/cli/chat/tools/tool_index.json, MIT OR Apache-2.0; see
// specs/SOURCE.md); grep.json and glob.json are strata's own.
//
//go:embed specs/*.json
var specFiles embed.FS

// specCache holds each built-in spec, built once per name.
var specCache sync.Map // name → llm.ToolSpec

// cachedSpec returns builtinSpec(name, description), computed once, with a
// fresh copy of the schema bytes so callers cannot change the cached spec.
func cachedSpec(name, description string) llm.ToolSpec {
	v, ok := specCache.Load(name)
	if !ok {
		v, _ = specCache.LoadOrStore(name, builtinSpec(name, description))
	}
	spec := v.(llm.ToolSpec)
	spec.InputSchema = bytes.Clone(spec.InputSchema)
	return spec
}

// builtinSpec builds a built-in tool's spec from the input_schema in
// specs/<name>.json (compacted, key order kept) and the model-facing
// description (the embedded <name>.md beside the tool's code). It never
// panics: a broken embedded file (caught by the tests) yields a schema that
// no input satisfies and a description saying why.
func builtinSpec(name, description string) llm.ToolSpec {
	spec := llm.ToolSpec{Name: name, Description: strings.TrimSpace(description)}
	schema, err := loadSchema(name)
	if err != nil {
		spec.Description = fmt.Sprintf("(unavailable: %v)", err)
		schema = json.RawMessage(`{"type":"object","not":{}}`)
	}
	spec.InputSchema = schema
	return spec
}

// loadSchema returns the compacted input_schema of specs/<name>.json.
func loadSchema(name string) (json.RawMessage, error) {
	b, err := specFiles.ReadFile("specs/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var file struct {
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("specs/%s.json: %w", name, err)
	}
	if len(file.InputSchema) == 0 {
		return nil, fmt.Errorf("specs/%s.json: no input_schema", name)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, file.InputSchema); err != nil {
		return nil, fmt.Errorf("specs/%s.json: %w", name, err)
	}
	return buf.Bytes(), nil
}
