package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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
		`{"command":"load","load_id":"../../x"}`,
		`{"command":"complete","completed_indices":[0],"context_update":"c","current_id":"1"}`,
	}
	names := []string{"fs_read", "fs_write", "execute_bash", "grep", "glob", "todo_list"}
	for _, s := range seeds {
		for i := range names {
			f.Add(uint8(i), []byte(s))
		}
	}
	r := NewRegistry(&FSRead{}, &FSWrite{}, &ExecuteBash{Timeout: time.Second}, &Grep{}, &Glob{}, &TodoList{})
	f.Fuzz(func(t *testing.T, which uint8, input []byte) {
		ws := workspace(t, map[string]string{"a.txt": "alpha\nbeta\n", "sub/b.go": "package b\n",
			TodoDir + "/1.json": `{"id":"../../../x","description":"d","tasks":[{"task_description":"t"}]}`})
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

// FuzzResolvePath checks every path ResolvePath accepts against the OS's own
// resolution and the policies, in a fixed fixture holding symlinks in and
// out of the workspace (relative, absolute, chained, dangling, looping), a
// hard link to an outside file, denied files and a read-only allowed root.
// For an accepted path it must hold that:
//
//   - the result is absolute, clean and free of symlinks (filepath.EvalSymlinks
//     of it, or of its longest existing prefix, changes nothing);
//   - when the cleaned input exists, filepath.EvalSymlinks of it is the result;
//   - the result lies inside the workspace or an allowed root of the access;
//   - neither the cleaned input nor the result is covered by a denied path
//     (.env and *.pem at any depth, secrets/ for reads; also ro/ for writes);
//   - an existing regular file has one link.
//
// And the converse: an existing path the OS resolves inside the roots that
// no rule covers is accepted. The fixture is only read, so it is built once.
func FuzzResolvePath(f *testing.F) {
	fx := newResolveFixture(f)
	for _, s := range []string{
		".", "a.txt", "sub/b.txt", "./sub/../a.txt", "../outside/victim.json", "/etc/passwd", "~", "~/x",
		"in", "in/b.txt", "in/../a.txt", "out", "out/victim.json", "dangling", "dangling/x", "loop1", "abs-in",
		"chain", "chain/b.txt", ".env", "sub/.env", "secrets/k", "sec-link", "keys/x.pem", "ro/r.txt", "ro/new",
		"hard.txt", "new/dir/file", fx.shared + "/s.txt", fx.shared + "/../outside/victim.json", "sub//b.txt/",
		"a.txt/x", "/proc/self/root" + fx.ws + "/a.txt", "/proc/self/cwd", "sub/\x00", strings.Repeat("a/", 300),
		"to-shared/s.txt", "to-ro/r.txt",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, p string, write bool) {
		access := AccessRead
		if write {
			access = AccessWrite
		}
		got, err := ResolvePath(fx.env, p, access)
		clean, cleanOK := fx.clean(p)
		if err != nil {
			if errors.Is(err, ErrSandbox) && cleanOK {
				if ev, evErr := filepath.EvalSymlinks(clean); evErr == nil && fx.permits(access, clean, ev) {
					t.Fatalf("%s %q refused (%v), but the OS resolves it to %s, which no rule covers", access, p, err, ev)
				}
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("%s %q: result %q is not absolute and clean", access, p, got)
		}
		if pre := existingPrefix(got); pre != "" {
			if ev, err := filepath.EvalSymlinks(pre); err != nil || ev != pre {
				t.Fatalf("%s %q: result %q goes through a symlink at %s (%s, %v)", access, p, got, pre, ev, err)
			}
		}
		if cleanOK {
			if _, err := os.Stat(clean); err == nil {
				if ev, err := filepath.EvalSymlinks(clean); err != nil || ev != got {
					t.Fatalf("%s %q: result %q, but the OS resolves %s to %q (%v)", access, p, got, clean, ev, err)
				}
			}
		}
		if !fx.permits(access, clean, got) {
			t.Fatalf("%s %q accepted as %q, which the policy refuses", access, p, got)
		}
	})
}

// resolveFixture is FuzzResolvePath's file tree and policy.
type resolveFixture struct {
	ws, outside, shared string // resolved roots
	env                 *Env
}

func newResolveFixture(f *testing.F) resolveFixture {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	fx := resolveFixture{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), shared: filepath.Join(base, "shared")}
	files := map[string]string{
		"ws/a.txt": "a", "ws/sub/b.txt": "b", "ws/sub/.env": "e", "ws/.env": "e", "ws/secrets/k": "k",
		"ws/keys/x.pem": "p", "ws/ro/r.txt": "r", "outside/victim.json": "v", "outside/dir/x": "x", "shared/s.txt": "s",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		"in": "sub", "out": "../outside", "dangling": filepath.Join(fx.outside, "missing"), "loop1": "loop2",
		"loop2": "loop1", "abs-in": filepath.Join(fx.ws, "sub/b.txt"), "chain": "in", "sec-link": "secrets/k",
		"to-shared": fx.shared, "to-ro": "ro", "sub/up": "..", "sub/env-link": "../.env",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(fx.ws, filepath.FromSlash(name))); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(fx.outside, "victim.json"), filepath.Join(fx.ws, "hard.txt")); err != nil {
		f.Fatal(err)
	}
	fx.env = &Env{
		Workdir:    fx.ws,
		ReadPaths:  PathPolicy{AllowedPaths: []string{fx.shared}, DeniedPaths: []string{".env", "*.pem", "secrets"}},
		WritePaths: PathPolicy{DeniedPaths: []string{filepath.Join(fx.ws, "ro")}},
	}
	return fx
}

// clean is the absolute, cleaned form ResolvePath starts from; ok is false
// for inputs the OS cannot name (empty, NUL).
func (fx resolveFixture) clean(p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(fx.ws, p)
	}
	return filepath.Clean(p), true
}

// permits is the policy written independently of ResolvePath: the
// resolved path inside a root of the access, neither path denied, and an
// existing regular file with one link.
func (fx resolveFixture) permits(access Access, clean, resolved string) bool {
	if !within(fx.ws, resolved) && (access == AccessWrite || !within(fx.shared, resolved)) {
		return false
	}
	for _, p := range []string{clean, resolved} {
		for _, c := range strings.Split(filepath.ToSlash(p), "/") {
			if c == ".env" || c == "secrets" || strings.HasSuffix(c, ".pem") {
				return false
			}
		}
		if access == AccessWrite && within(filepath.Join(fx.ws, "ro"), p) {
			return false
		}
	}
	if fi, err := os.Lstat(resolved); err == nil && fi.Mode().IsRegular() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
			return false
		}
	}
	return true
}

// existingPrefix returns the longest prefix of the absolute path p that
// exists (without following a final symlink), or "".
func existingPrefix(p string) string {
	for {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
	}
}

// FuzzCommandLists checks the command lists on arbitrary commands and
// patterns: splitCommand's parts are trimmed, non-empty and free of the
// separators it splits at; a command CommandAllowed lets through a deny
// pattern matches it neither whole nor in any part (text parts and the
// parser's simple commands); a command CommandPreApproved accepts matches
// the allow pattern whole and in every command of its pipeline and is not
// denied; ".*" denies everything. Nothing panics. What bash then runs is
// FuzzCommandClassification's to check.
func FuzzCommandLists(f *testing.F) {
	for _, s := range [][2]string{
		{"git status", "git .*"}, {"git status; rm -rf ~", "git .*"}, {"echo $(rm x)", "rm .*"},
		{"rm\t-rf x", "rm .*"}, {"r''m -rf x", "rm .*"}, {"X=rm; $X -rf x", "rm .*"}, {`eval "rm -rf x"`, "rm .*"},
		{"find . -delete", "find .*"}, {"a && b || c | d & e\nf `g` <(h) >(i)", "[a-i]"}, {"(", "("}, {"", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, command, pattern string) {
		for _, p := range splitCommand(command) {
			if p == "" || p != strings.TrimSpace(p) || strings.ContainsAny(p, ";&|\n\r`()") {
				t.Fatalf("splitCommand(%q) part %q", command, p)
			}
		}
		if CommandAllowed(&Env{DeniedCommands: []string{".*"}}, command) == nil {
			t.Fatalf("deniedCommands [.*] let %q through", command)
		}
		deny, err := regexp.Compile(`(?s)\A(?:` + pattern + `)\z`)
		if err != nil {
			if CommandAllowed(&Env{DeniedCommands: []string{pattern}}, command) == nil {
				t.Fatalf("invalid deny pattern %q did not refuse", pattern)
			}
			if CommandPreApproved(&Env{AllowedCommands: []string{pattern}}, command) {
				t.Fatalf("invalid allow pattern %q pre-approved", pattern)
			}
			return
		}
		if CommandAllowed(&Env{DeniedCommands: []string{pattern}}, command) == nil {
			if deny.MatchString(command) {
				t.Fatalf("%q matches deny %q but was allowed", command, pattern)
			}
			for _, p := range append(splitCommand(command), parseShell(command).all...) {
				if deny.MatchString(p) {
					t.Fatalf("part %q of %q matches deny %q but was allowed", p, command, pattern)
				}
			}
		}
		allow := regexp.MustCompile(`\A(?:` + pattern + `)\z`)
		if CommandPreApproved(&Env{AllowedCommands: []string{pattern}}, command) {
			if !allow.MatchString(command) {
				t.Fatalf("%q pre-approved by %q without matching it", command, pattern)
			}
			for _, p := range parseShell(command).texts {
				if !allow.MatchString(p) {
					t.Fatalf("%q pre-approved by %q but its part %q does not match", command, pattern, p)
				}
			}
		}
	})
}
