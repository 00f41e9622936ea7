// Package tool holds strata's tool registry and its built-in tools: fs_read,
// fs_write, execute_bash, grep, glob and todo_list (Builtins), and the kiro
// built-ins an agent file can ask for by name: thinking, web_fetch,
// introspect and knowledge (the runtime adds them when the agent's tools
// allow them).
//
// Every tool declares an llm.ToolSpec whose InputSchema is a JSON Schema. The
// Registry compiles each schema once (github.com/google/jsonschema-go) and
// validates every tool_use input against it before the tool runs, so a tool's
// Run only ever sees input of the declared shape. Execute turns every failure
// (unknown tool, bad JSON, schema violation, sandbox refusal, timeout, tool
// error, panic) into an is_error tool_result the model can read.
//
// Where kiro / Amazon Q has the same tool (fs_read, fs_write, execute_bash,
// todo_list), the input schema is kiro's JSON unchanged (compacted), so real
// agent configs and recorded model calls work unchanged (see
// specs/SOURCE.md). The model-facing descriptions are the embedded <tool>.md
// files beside the code.
//
// # Workspace sandbox
//
// Every file a built-in tool reads, writes or lists goes through ResolvePath
// with the access it makes (AccessRead: fs_read, grep, glob, todo_list
// loading; AccessWrite: fs_write, todo_list saving). A path is accepted when,
// after following symlinks, it lies inside Env.Workdir or one of that
// access's allowed paths (Env.ReadPaths or Env.WritePaths), matches none of
// its denied paths (a write also none of ReadPaths' denied paths), and is not
// a hard-linked file. Listings (fs_read Directory, grep, glob, todo_list
// lookup) walk without following symlinks and leave out .git, what
// ReadPaths.DeniedPaths cover (names and sizes too) and, for grep, the
// content of hard-linked files. todo_list takes list ids as plain names
// ([A-Za-z0-9_-], no path) and never takes a file name from a list's content.
//
// What the sandbox does not do:
//
//   - It does not confine execute_bash. A command runs with the user's rights
//     anywhere on the file system; only Env.DeniedCommands and the approval
//     step (which Env.AllowedCommands skip) stand before it, and both lists
//     are regular expressions over the command's text (see "Command lists").
//     Nor does it confine MCP servers' tools.
//   - It checks paths, then the tool opens the checked, symlink-free path. A
//     process running at the same time (a command the model started with
//     execute_bash, say) can swap a directory for a symlink between the check
//     and the open; the sandbox does not use openat2(RESOLVE_BENEATH) or hold
//     directory handles.
//   - ".." is lexical: "a/../b" is "b" even when a is a symlink (the path is
//     cleaned before symlinks are followed, as filepath.Clean does), and the
//     tool then touches the checked path, not what the kernel would resolve.
//
// # Hard links
//
// A hard link is a second name of the same file; nothing in a file or its
// directory entry says where its other names are, so a link inside the
// workspace can give a path sandbox the content of a file outside it (and a
// write through it changes that file). On Unix, ResolvePath therefore refuses
// an existing regular file with a link count (st_nlink) over 1, for reads and
// writes, unless Env.AllowHardlinks is set; grep skips such files and says how
// many it skipped; fs_read Directory and glob still list them (name and size,
// never content). A new file strata creates has one link; todo_list replaces
// its lists by rename, so it never writes through a link. The rule costs
// workspaces that hard-link files on purpose (pnpm's node_modules, `cp -al`
// snapshots, `git clone` of a local path inside .git/objects); set
// AllowHardlinks where every link is known to stay inside the allowed roots.
// Platforms whose os.FileInfo has no link count (Windows) do not apply it.
//
// # Command lists
//
// allowedCommands and deniedCommands (kiro's execute_bash settings) are
// regular expressions over the text of a command. CommandAllowed checks the
// whole command, every simple command bash's grammar finds in it (parsed
// with mvdan.cc/sh/v3/syntax) and the parts of a plain text split at ;, &,
// |, newlines and substitutions against the deny list. CommandPermission
// pre-approves only a command kiro's dangerous-pattern rules pass and the
// parser reads as one plain pipeline of literal words (no expansion,
// substitution, redirection, assignment or code-running builtin), whose
// every command matches the allow list (docs/security.md, "Command
// classification"; FuzzCommandClassification checks it against bash). The
// deny side also sees each simple command as bash will run it: quotes and
// escapes removed, the name without its directory, the command a wrapper
// (command, exec, env, sudo, …) runs, the code eval or bash -c runs
// (TestAttackDenyListSeesWhatBashRuns). What still gets through a deny list
// such as ["rm .*"], each kept as a test (TestLimitDenyListBypasses): a
// variable (`X=rm; $X -rf x`); another program doing the same
// (`find . -delete`, `python3 -c ...`). A deny list is a speed bump against a careless
// model, not a boundary against a hostile one. An allow list is safer (a
// command must match a pattern entirely, command by command) but only as narrow
// as its patterns: "git .*" pre-approves `git -c core.fsmonitor=... status`.
// Use the approval step (--approve ask or allowlist) and a sandboxed
// machine for untrusted work.
//
// # Git
//
// git runs programs that its repository's files name: core.fsmonitor,
// core.sshCommand, core.pager, diff and filter drivers in .git/config, the
// scripts in .git/hooks (or core.hooksPath). A model that can write
// .git/config can make the next `git status` — one an agent's
// allowedCommands lets run without asking — execute anything. So
// ResolvePath refuses writes at or under any path component named .git, at
// any depth (a sub-directory's repository, a .git file pointing elsewhere,
// .git/info/attributes and exclude, .git/modules and .git/worktrees
// included), checked on the lexical and the resolved path so a symlink to
// .git does not help. An fs_write allowedPaths entry naming a path inside
// .git (".git/info/exclude") opens exactly what it covers. Reads are not
// affected. Not covered: execute_bash (not sandboxed) can write .git
// itself; a directory shaped like a bare repository (HEAD, objects/, refs/,
// config) elsewhere in the workspace is a repository to git when a command
// runs inside it (git's safe.bareRepository=explicit setting refuses
// those); .gitattributes and .gitmodules in the work tree stay writable, as
// the drivers they name must be defined in a git config file to run.
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
// empty Workdir means the process's working directory, and empty path
// policies allow the workspace root and nothing else.
//
// ReadPaths and WritePaths follow kiro's toolsSettings for fs_read and
// fs_write (allowedPaths, deniedPaths), one policy per access, so settings
// given for reading never make a path writable (see ResolvePath).
// AllowedCommands and DeniedCommands follow kiro's execute_bash settings:
// RE2 regular expressions anchored at both ends (\A…\z); a command matching
// a denied pattern is refused, and one matching AllowedCommands runs
// without prompting (CommandPreApproved), others go through the approval
// step (deny wins).
type Env struct {
	// Workdir is the absolute workspace root; every path resolves inside it
	// (or inside the access's allowed paths). Relative values are made
	// absolute against the process's working directory.
	Workdir string
	// ReadPaths is the path policy of reads (fs_read, grep, glob, todo_list
	// loading and listing); the runtime fills it from toolsSettings.fs_read.
	ReadPaths PathPolicy
	// WritePaths is the path policy of writes (fs_write, todo_list saving);
	// the runtime fills it from toolsSettings.fs_write. ReadPaths'
	// DeniedPaths apply to writes too; its AllowedPaths do not.
	WritePaths PathPolicy
	// AllowHardlinks lets tools read and write regular files that have more
	// than one hard link, which ResolvePath refuses by default (package doc,
	// "Hard links"). Set it only where no link leads out of the allowed
	// roots; the runtime never sets it.
	AllowHardlinks bool
	// MaxResultBytes caps the text of every tool_result Registry.Execute
	// returns, error results included (bytes of all text blocks): the
	// first MaxResultBytes are kept and a note says how much was cut. 0 =
	// DefaultMaxResultBytes; negative = no cap.
	MaxResultBytes int
	// AllowedCommands are execute_bash regex patterns of commands that run
	// without prompting (CommandPreApproved; the runtime's allowlist uses
	// it). execute_bash itself does not refuse other commands.
	AllowedCommands []string
	// DeniedCommands are execute_bash regex patterns that refuse a command.
	DeniedCommands []string
	// DenyByDefault refuses, without asking, an execute_bash command that
	// would otherwise be asked about (kiro's execute_bash denyByDefault;
	// CommandPermission).
	DenyByDefault bool
	// AutoAllowReadonly runs pipelines of kiro's read-only commands (ls,
	// cat, echo, pwd, which, head, tail, find, grep, dir, type) without
	// prompting (kiro's execute_bash autoAllowReadonly; CommandPermission).
	AutoAllowReadonly bool
	// PersonApproved, when non-nil, reports whether a person answered the
	// approval of the tool call callID itself (not a mode, an allowlist or
	// an earlier "always"). Only such a call may use a path outside the
	// workspace and the access's allowedPaths, or write agent configuration
	// (ConfigPath); nil: no call may (docs/security.md, "Who may approve
	// what"). The runtime sets it from its approver.
	PersonApproved func(callID string) bool
	// ConfigPaths are more files and folders (absolute, "~/…" or relative
	// to Workdir) that count as agent configuration for writes (ConfigPath):
	// the runtime adds strata's own config file and folder.
	ConfigPaths []string
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
	// SessionID is the id of the session the call belongs to ("" outside
	// a recorded session); Typed tools see it in their Call.
	SessionID string
	// Progress, when non-nil, receives progress lines while a tool runs
	// (execute_bash sends each output line). It may be called from several
	// goroutines, but never concurrently for one tool call.
	Progress func(msg string)
	// Outer, when non-nil, is the environment of the agent that started
	// this one (use_subagent): every path ResolvePath accepts must also
	// pass ResolvePath(Outer, …) for the same access, so a sub-agent never
	// reaches what its parent could not (see Narrow).
	Outer *Env
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
