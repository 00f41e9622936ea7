package tool

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
)

// FuzzExecuteArgs feeds arbitrary bytes as the input of every built-in tool
// through Registry.Execute in a temp workspace: Execute must never panic
// and must always answer with a tool_result for the call.
//
// execute_bash is fuzzed with DeniedCommands [".*"], so every command that
// passes schema validation is refused before anything runs: the fuzzer
// exercises decoding, validation and the command policy, never a shell.
// Paths the fuzzer invents are confined by the sandbox to the temp
// workspace (fs_write may create files there).
func FuzzExecuteArgs(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `"x"`, `{"operations":[]}`, `{`,
		`{"operations":[{"mode":"Line","path":"a.txt","start_line":-1,"end_line":-9999999999}]}`,
		`{"operations":[{"mode":"Directory","path":".","depth":99}]}`,
		`{"operations":[{"mode":"Search","path":"a.txt","pattern":"a","context_lines":-5}]}`,
		`{"operations":[{"mode":"Image","image_paths":["../x.png"]}]}`,
		`{"command":"str_replace","path":"a.txt","old_str":"a","new_str":"b"}`,
		`{"command":"insert","path":"a.txt","insert_line":1e300,"new_str":"b"}`,
		`{"command":"create","path":"d/e.txt","file_text":"x"}`,
		`{"command":"rm -rf /"}`,
		`{"pattern":"(a|b)*","path":".","include":"**/*.txt","case_insensitive":true,"max_results":1}`,
		`{"pattern":"[","path":"/"}`,
	}
	names := []string{"fs_read", "fs_write", "execute_bash", "grep", "glob"}
	for _, s := range seeds {
		for i := range names {
			f.Add(uint8(i), []byte(s))
		}
	}
	r := NewRegistry(&FSRead{}, &FSWrite{}, &ExecuteBash{Timeout: time.Second}, &Grep{}, &Glob{})
	f.Fuzz(func(t *testing.T, which uint8, input []byte) {
		ws := workspace(t, map[string]string{"a.txt": "alpha\nbeta\n", "sub/b.go": "package b\n"})
		env := &Env{Workdir: ws, DeniedCommands: []string{".*"}}
		name := names[int(which)%len(names)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b := r.Execute(ctx, env, llm.ToolUseBlock("fz", name, json.RawMessage(input)))
		if b.Type != llm.BlockToolResult || b.ID != "fz" || len(b.Content) == 0 {
			t.Fatalf("%s(%q): bad result %+v", name, input, b)
		}
		if name == "execute_bash" && !b.IsError {
			t.Fatalf("execute_bash ran a command under DeniedCommands [.*]: %q", input)
		}
	})
}
