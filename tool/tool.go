// Package tool holds strata's tool registry and its built-in tools: fs_read,
// fs_write, execute_bash, grep and glob.
//
// Every tool declares an llm.ToolSpec whose InputSchema is a JSON Schema. The
// Registry compiles each schema once (github.com/google/jsonschema-go) and
// validates every tool_use input against it before the tool runs, so a tool's
// Run only ever sees input of the declared shape. Execute turns every failure
// (unknown tool, bad JSON, schema violation, sandbox refusal, timeout, tool
// error, panic) into an is_error tool_result the model can read.
//
// Where kiro / Amazon Q has the same tool (fs_read, fs_write, execute_bash),
// the input schema is kiro's JSON unchanged (compacted), so real agent configs
// and recorded model calls work unchanged (see specs/SOURCE.md). The
// model-facing descriptions are the embedded <tool>.md files beside the code.
//
// All paths go through ResolvePath, the workspace sandbox: a path resolves
// inside Env.Workdir or one of Env.AllowedPaths, after following symlinks, and
// never matches Env.DeniedPaths.
package tool

import (
	"context"
	"encoding/json"
	"os"

	"github.com/strata-agent/strata/llm"
)

// Tool is one callable tool.
//
// Spec returns the same value on every call. Run gets input already validated
// against Spec().InputSchema (when called through a Registry) and must not
// retain it. Run must honour ctx (return promptly once it is done), must not
// panic, and may be called concurrently with itself. A non-nil error means the
// tool failed; its message is returned to the model as an is_error
// tool_result. A Result with IsError set is an error the tool reports with
// content of its own.
type Tool interface {
	Spec() llm.ToolSpec
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Result is what a tool returns to the model.
type Result struct {
	// Content holds the text and image blocks of the tool_result, in order.
	Content []llm.Block
	// IsError marks the result as a failure the model should see as one.
	IsError bool
}

// TextResult returns a successful Result with one text block.
func TextResult(s string) Result { return Result{Content: []llm.Block{llm.TextBlock(s)}} }

// Env is the workspace a tool call runs in. The zero value is usable: an
// empty Workdir means the process's working directory.
//
// AllowedPaths and DeniedPaths follow kiro's toolsSettings (allowedPaths,
// deniedPaths): entries are paths or gitignore-style globs, absolute, "~/…"
// or relative to Workdir, and a plain path also covers everything below it.
// AllowedCommands and DeniedCommands follow kiro's execute_bash settings:
// RE2 regular expressions anchored at both ends (\A…\z); a command matching
// a denied pattern is refused, and when AllowedCommands is non-empty a
// command must match one of them (deny wins).
type Env struct {
	// Workdir is the absolute workspace root; every path resolves inside it
	// (or inside AllowedPaths). Relative values are made absolute against the
	// process's working directory.
	Workdir string
	// AllowedPaths are extra roots (or globs) outside Workdir that paths may
	// resolve into.
	AllowedPaths []string
	// DeniedPaths are paths or globs no tool may touch, even inside Workdir.
	DeniedPaths []string
	// AllowedCommands are execute_bash regex patterns; when non-empty a
	// command must match one.
	AllowedCommands []string
	// DeniedCommands are execute_bash regex patterns that refuse a command.
	DeniedCommands []string
	// Editor, when non-nil, is the client that owns the workspace's text
	// files (an ACP client offering fs/read_text_file and
	// fs/write_text_file): fs_read reads text through it, so the model sees
	// unsaved editor buffers, and fs_write reads and writes through it, so
	// the editor tracks the change. The sandbox still applies first.
	Editor Editor
	// Terminal, when non-nil, runs execute_bash commands in the client's
	// terminal (ACP terminal/create …) so the user watches them live; the
	// command policy and timeout still apply.
	Terminal Terminal
	// CallID is the id of the tool_use being run (set by the loop for each
	// call; empty outside a loop).
	CallID string
	// Progress, when non-nil, receives progress lines while a tool runs
	// (execute_bash sends each output line). It may be called from several
	// goroutines, but never concurrently for one tool call.
	Progress func(msg string)
}

// Editor reads and writes whole text files for fs_read and fs_write. Paths
// are absolute and already resolved by ResolvePath. Errors are returned to
// the model in the tool_result.
type Editor interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// Terminal runs one shell command for execute_bash: `bash -c command` in
// dir, stdout and stderr interleaved, output capped at limit bytes (the
// client keeps the end). callID names the tool_use the command belongs to,
// for a client that shows the terminal inside that tool call. Run kills the
// command when ctx ends and returns ctx's error.
type Terminal interface {
	Run(ctx context.Context, callID, command, dir string, limit int) (TerminalResult, error)
}

// TerminalResult is a finished terminal command.
type TerminalResult struct {
	Output    string // interleaved stdout and stderr, at most the limit (bytes)
	Truncated bool   // the client dropped the start of the output
	ExitCode  *int   // nil when a signal ended the command
	Signal    string // the signal that ended the command, if any
}

// readFile reads abs through env.Editor when it is set, else from disk.
func readFile(ctx context.Context, env *Env, abs string) ([]byte, error) {
	if env != nil && env.Editor != nil {
		s, err := env.Editor.ReadTextFile(ctx, abs)
		return []byte(s), err
	}
	return os.ReadFile(abs)
}

// writeFile writes abs through env.Editor when it is set, else to disk
// with mode.
func writeFile(ctx context.Context, env *Env, abs, content string, mode os.FileMode) error {
	if env != nil && env.Editor != nil {
		return env.Editor.WriteTextFile(ctx, abs, content)
	}
	return os.WriteFile(abs, []byte(content), mode)
}

// progress reports msg through env.Progress when it is set.
func (e *Env) progress(msg string) {
	if e != nil && e.Progress != nil {
		e.Progress(msg)
	}
}

// Builtins returns new instances of the built-in tools with default settings,
// in this order: fs_read, fs_write, execute_bash, grep, glob, todo_list.
func Builtins() []Tool {
	return []Tool{&FSRead{}, &FSWrite{}, &ExecuteBash{}, &Grep{}, &Glob{}, &TodoList{}}
}
