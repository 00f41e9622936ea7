package strata_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// kiroCase is one decision of kiro-cli's permission tests: a tool call and
// what kiro's eval_perm answers for it ("allow", "ask" or "deny").
type kiroCase struct {
	name  string
	input map[string]any
	want  string
}

// bashCase is an execute_bash kiroCase.
func bashCase(command, want string) kiroCase {
	return kiroCase{"execute_bash", map[string]any{"command": command}, want}
}

// kiroDecisions runs cases as the tool calls of one model response through
// the runtime's loop (agent file agentJSON as .kiro/agents/k.json, mode
// allowlist, a loopback model) and returns what the authority stack did
// with each call: "allow" (pre-approved: a guard hook saw it unasked),
// "ask" (the approver was asked; it rejects) or "deny" (refused before
// anyone was asked). The guard blocks every call, so nothing runs. dir is
// the workspace ("" for a new one).
func kiroDecisions(t *testing.T, dir, agentJSON string, cases []kiroCase) []string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	writeFiles(t, dir, map[string]string{".kiro/agents/k.json": agentJSON})
	calls := make([]llm.Block, len(cases))
	for i, c := range cases {
		calls[i] = toolUse(fmt.Sprintf("c%02d", i), c.name, c.input)
	}
	srv := replayServer(t, llm.APIAnthropic, replay.Reply{Blocks: calls}, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
	var mu sync.Mutex
	unasked := map[string]bool{}
	guard := agent.Hook{Name: "observe", Stage: agent.StageToolCall, Phase: agent.PhasePre, Kind: agent.HookGuard,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			mu.Lock()
			unasked[p.ToolCall.ID] = true
			mu.Unlock()
			return agent.Verdict{Deny: true, Reason: "the test runs nothing"}, nil
		}}
	ap := &askLog{answer: agent.RejectOnce}
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "k", ProviderName: "anthropic", BaseURL: srv.URL(),
		Mode: agent.ModeAllowlist, Approver: ap, Hooks: []agent.Hook{guard}, Store: session.NewMemory(),
		Params: llm.Params{MaxTokens: 1024}})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	for _, id := range ap.asked {
		asked[id] = true
	}
	out := make([]string, len(cases))
	for i, c := range calls {
		switch {
		case asked[c.ID] && unasked[c.ID]:
			t.Fatalf("%s was asked about and then pre-approved", c.ID)
		case asked[c.ID]:
			out[i] = "ask"
		case unasked[c.ID]:
			out[i] = "allow"
		default:
			out[i] = "deny"
		}
	}
	return out
}

// checkKiro runs cases with agentJSON and reports every decision that
// differs from kiro's.
func checkKiro(t *testing.T, dir, agentJSON string, cases []kiroCase) {
	t.Helper()
	got := kiroDecisions(t, dir, agentJSON, cases)
	for i, c := range cases {
		if got[i] != c.want {
			in, _ := json.Marshal(c.input)
			t.Errorf("%s %s: %s, kiro says %s", c.name, in, got[i], c.want)
		}
	}
}

// bashAgent is an agent file whose only tool is execute_bash, with the
// given execute_bash toolsSettings (nil: none) and allowedTools.
func bashAgent(settings map[string]any, allowedTools ...string) string {
	allowedTools = append([]string{}, allowedTools...)
	a := map[string]any{"name": "k", "prompt": "p", "tools": []string{"execute_bash"}, "allowedTools": allowedTools}
	if settings != nil {
		a["toolsSettings"] = map[string]any{"execute_bash": settings}
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// kiro: execute/mod.rs test_requires_acceptance_for_readonly_commands
// (requires_acceptance(None, true): autoAllowReadonly, no allowedCommands).
// Where strata asks and kiro does not, the case says why
// (docs/kiro.md, "Tool permissions").
func TestKiroExecuteBash_ReadonlyCommands(t *testing.T) {
	var cases []kiroCase
	for cmd, want := range map[string]string{
		"ls ~": "allow", "ls -al ~": "allow", "pwd": "allow", "echo 'Hello, world!'": "allow", "which aws": "allow",
		"echo hi > myimportantfile": "ask", "ls -al >myimportantfile": "ask", "echo hi 2> myimportantfile": "ask",
		"echo hi >> myimportantfile": "ask", "echo $(rm myimportantfile)": "ask", "echo `rm myimportantfile`": "ask",
		"echo hello && rm myimportantfile": "ask", "echo hello&&rm myimportantfile": "ask",
		"ls nonexistantpath || rm myimportantfile": "ask", "echo myimportantfile | xargs rm": "ask",
		"echo myimportantfile|args rm": "ask", "echo <(rm myimportantfile)": "ask",
		"cat <<< 'some string here' > myimportantfile":                       "ask",
		"echo '\n#!/usr/bin/env bash\necho hello\n' > myscript.sh":           "ask",
		"cat <<EOF > myimportantfile\nhello world\nEOF":                      "ask",
		"which ls\ntouch asdf":                                               "ask",
		"which ls\rtouch asdf":                                               "ask",
		`IFS=';'; for cmd in "which ls;touch asdf"; do eval "$cmd"; done`:    "ask",
		"find . -name '*.rs' | grep main":                                    "allow",
		"ls -la | grep .git":                                                 "allow",
		"cat file.txt | grep pattern | head -n 5":                            "allow",
		"find . -name '*.rs' | rm":                                           "ask",
		"ls -la | grep .git | rm -rf":                                        "ask",
		"echo hello | sudo rm -rf /":                                         "ask",
		`find important-dir/ -exec rm {} \;`:                                 "ask",
		`find . -name '*.c' -execdir gcc -o '{}.out' '{}' \;`:                "ask",
		"find important-dir/ -delete":                                        "ask",
		"find important-dir/ -fls /etc/passwd":                               "ask",
		"echo y | find . -type f -maxdepth 1 -okdir open -a Calculator {} +": "ask",
		"find important-dir/ -name '*.txt'":                                  "allow",
		`find / -fprintf "/path/to/file" <data-to-write> -quit`:              "ask",
		`find . -${t}exec touch asdf \{\} +`:                                 "ask",
		`find . -${t:=exec} touch asdf2 \{\} +`:                              "ask",
		`find /tmp -name "*"  -exe$9c touch /tmp/find_result {} +`:           "ask",
		`echo 'test data' | grep -P '(?{system("date")})'`:                   "ask",
		`echo 'test data' | grep --perl-regexp '(?{system("date")})'`:        "ask",
	} {
		cases = append(cases, bashCase(cmd, want))
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].input["command"].(string) < cases[j].input["command"].(string) })
	checkKiro(t, "", bashAgent(map[string]any{"autoAllowReadonly": true}), cases)
}

// kiro: execute/mod.rs test_requires_acceptance_for_windows_commands, as
// text (the same rules decide on every platform).
func TestKiroExecuteBash_WindowsCommands(t *testing.T) {
	checkKiro(t, "", bashAgent(map[string]any{"autoAllowReadonly": true}), []kiroCase{
		bashCase("dir", "allow"), bashCase("type file.txt", "allow"), bashCase("echo Hello, world!", "allow"),
		bashCase("del file.txt", "ask"), bashCase("rmdir /s /q folder", "ask"), bashCase("rd /s /q folder", "ask"),
		bashCase("format c:", "ask"), bashCase("erase file.txt", "ask"), bashCase("copy file.txt > important.txt", "ask"),
		bashCase("move file.txt destination", "ask"), bashCase("dir | findstr txt", "ask"),
		bashCase("type file.txt | findstr pattern", "ask"), bashCase("dir | del", "ask"), bashCase("type file.txt | del", "ask"),
	})
}

// kiro: execute/mod.rs test_requires_acceptance_allowed_commands
// (anchored regexes; dangerous patterns ask whatever the list says). One
// deliberate difference: "command" is bash's builtin that runs its
// arguments as a command, so strata never lets an allow pattern match it
// (docs/security.md, "Command classification"); kiro's test uses the word
// as a placeholder name and allows it.
func TestKiroExecuteBash_AllowedCommands(t *testing.T) {
	settings := map[string]any{"autoAllowReadonly": true, "allowedCommands": []string{
		"git status", "root", "command subcommand a=[0-9]{10} b=[0-9]{10}", "command subcommand && command subcommand"}}
	checkKiro(t, "", bashAgent(settings), []kiroCase{
		bashCase("root", "allow"), bashCase("root subcommand", "ask"), bashCase("git", "ask"), bashCase("git status", "allow"),
		bashCase("command subcommand a=0123456789 b=0123456789", "ask"), // kiro: allow (see above)
		bashCase("command subcommand a=0123456789 b=012345678", "ask"),
		bashCase("command subcommand alternate a=0123456789 b=0123456789", "ask"),
		bashCase("echo 'test<(data'", "ask"), bashCase("echo 'test$(data)'", "ask"), bashCase("echo 'test`data`'", "ask"),
		bashCase("echo 'test' > output.txt", "ask"), bashCase("echo 'test data' && touch main.py", "ask"),
		bashCase("echo 'test' || rm file", "ask"), bashCase("echo 'test' & background", "ask"),
		bashCase("echo 'test data'; touch main.py", "ask"), bashCase("echo $HOME", "ask"),
		bashCase("echo 'test\nrm file'", "ask"), bashCase("echo 'test\rrm file'", "ask"), bashCase("IFS=/ malicious", "ask"),
	})
}

// kiro: execute/mod.rs test_eval_perm: deniedCommands deny without asking,
// also with execute_bash in allowedTools; allowedCommands allow; the rest
// asks, or is allowed once execute_bash is in allowedTools.
func TestKiroExecuteBash_EvalPerm(t *testing.T) {
	settings := map[string]any{"allowedCommands": []string{"allow_wild_card .*", "allow_exact"}, "deniedCommands": []string{"git .*"}}
	cases := []kiroCase{
		bashCase("git status", "deny"), bashCase("this_is_not_a_read_only_command", "ask"),
		bashCase("allow_wild_card some_arg", "allow"), bashCase("allow_exact some_arg", "ask"), bashCase("allow_exact", "allow"),
	}
	checkKiro(t, "", bashAgent(settings), cases)
	checkKiro(t, "", bashAgent(settings, "execute_bash"), []kiroCase{
		bashCase("this_is_not_a_read_only_command", "allow"), bashCase("git status", "deny"),
	})
}

// kiro: execute/mod.rs test_eval_perm_allow_read_only_default,
// _allow_read_only_enabled, _allow_read_only_with_denied_commands:
// autoAllowReadonly defaults to false; when set, read-only commands run
// unasked unless denied.
func TestKiroExecuteBash_AutoAllowReadonly(t *testing.T) {
	checkKiro(t, "", bashAgent(nil), []kiroCase{bashCase("ls -la", "ask"), bashCase("rm file.txt", "ask")})
	checkKiro(t, "", bashAgent(map[string]any{"autoAllowReadonly": true}), []kiroCase{bashCase("ls -la", "allow"), bashCase("rm file.txt", "ask")})
	checkKiro(t, "", bashAgent(map[string]any{"autoAllowReadonly": true, "deniedCommands": []string{"ls .*"}}),
		[]kiroCase{bashCase("ls -la", "deny"), bashCase("cat file.txt", "allow")})
}

// kiro: execute/mod.rs test_eval_perm_denied_commands_invalid_regex: an
// invalid deniedCommands pattern denies every command.
func TestKiroExecuteBash_DeniedCommandsInvalidRegex(t *testing.T) {
	checkKiro(t, "", bashAgent(map[string]any{"deniedCommands": []string{"^(?!ls$).*"}}), []kiroCase{bashCase("pwd", "deny")})
}

// kiro: execute/mod.rs test_eval_perm_deny_by_default: a command outside
// allowedCommands is denied, not asked about.
func TestKiroExecuteBash_DenyByDefault(t *testing.T) {
	checkKiro(t, "", bashAgent(map[string]any{"allowedCommands": []string{"ls"}, "denyByDefault": true}),
		[]kiroCase{bashCase("ls", "allow"), bashCase("pwd", "deny")})
}

// fileAgent is an agent file with fs_read and fs_write, the given
// toolsSettings and allowedTools.
func fileAgent(settings map[string]any, allowedTools ...string) string {
	allowedTools = append([]string{}, allowedTools...)
	b, _ := json.Marshal(map[string]any{"name": "k", "prompt": "p", "tools": []string{"fs_read", "fs_write"},
		"allowedTools": allowedTools, "toolsSettings": settings})
	return string(b)
}

func writeCase(path, want string) kiroCase {
	return kiroCase{"fs_write", map[string]any{"command": "create", "path": path, "file_text": "content"}, want}
}

func readCase(want string, paths ...string) kiroCase {
	var ops []any
	for _, p := range paths {
		ops = append(ops, map[string]any{"mode": "Line", "path": p})
	}
	return kiroCase{"fs_read", map[string]any{"operations": ops}, want}
}

// kiro: fs_write.rs test_eval_perm, with kiro's absolute paths placed
// under a directory outside the workspace: deniedPaths deny (a match
// covers everything below it, "**" globs too), allowedPaths allow without
// asking, other paths ask; fs_write in allowedTools does not undo a deny.
func TestKiroFsWrite_EvalPerm(t *testing.T) {
	root := t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	settings := map[string]any{"fs_write": map[string]any{
		"allowedPaths": []string{at("some/allow/path"), at("allowed/glob/**/path")},
		"deniedPaths":  []string{at("some/denied/path"), at("denied/glob/**/path")}}}
	four := writeCase(at("denied/glob/child_one/grand_child_one/path/file.txt"), "deny")
	checkKiro(t, "", fileAgent(settings), []kiroCase{
		writeCase(at("not/a/denied/path/file.txt"), "ask"),
		writeCase(at("some/denied/path/file.txt"), "deny"),
		writeCase(at("some/denied/path/subdir/"), "deny"),
		writeCase(at("some/denied/path"), "deny"),
		writeCase(at("denied/glob/child_one/path/file.txt"), "deny"),
		four,
		writeCase(at("some/allow/path/some_file.txt"), "allow"),
		writeCase(at("some/allow/path/subdir/file.txt"), "allow"),
		writeCase(at("allowed/glob/child_one/grand_child_one/path/some_file.txt"), "allow"),
	})
	checkKiro(t, "", fileAgent(settings, "fs_write"), []kiroCase{four, writeCase(at("some/allow/path"), "allow")})
}

// kiro: fs_read.rs test_eval_perm_denied_path: every operation on a denied
// path or below it is denied, fs_read in allowedTools or not.
func TestKiroFsRead_EvalPermDeniedPath(t *testing.T) {
	root := t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	settings := map[string]any{"fs_read": map[string]any{"deniedPaths": []string{at("some/denied/path"), at("denied/glob/**/path")}}}
	c := readCase("deny", at("some/denied/path"), at("some/denied/path/child"),
		at("denied/glob/middle_one/middle_two/path"), at("denied/glob/middle_one/middle_two/path/child"))
	checkKiro(t, "", fileAgent(settings), []kiroCase{c})
	checkKiro(t, "", fileAgent(settings, "fs_read"), []kiroCase{c})
}

// kiro: fs_read.rs test_eval_perm_allowed_path_and_cwd and
// test_eval_perm_no_settings_cwd_behavior: reads in the working directory
// and the allowedPaths run unasked, others ask.
func TestKiroFsRead_EvalPermAllowedPathAndCwd(t *testing.T) {
	root, ws := t.TempDir(), t.TempDir()
	allowed := filepath.Join(root, "explicitly/allowed/path")
	settings := map[string]any{"fs_read": map[string]any{"allowedPaths": []string{allowed}}}
	outside := readCase("ask", filepath.Join(root, "not/allowed/file.txt"))
	checkKiro(t, ws, fileAgent(settings), []kiroCase{
		readCase("allow", allowed, filepath.Join(allowed, "file.txt")),
		readCase("allow", ws+"/", filepath.Join(ws, "file.txt")),
		outside,
	})
	checkKiro(t, ws, fileAgent(map[string]any{}), []kiroCase{readCase("allow", ws+"/", filepath.Join(ws, "file.txt")), outside})
}

// kiro: tool_permission_checker.rs test_builtin_namespace and
// test_native_vs_mcp_separation: "@builtin", "@builtin/" and "@builtin/*"
// allow every built-in, "@builtin/fs_*" and "fs_*" the fs tools.
func TestKiroToolPermissionChecker_BuiltinNamespace(t *testing.T) {
	ls := bashCase("ls", "allow")
	for _, entry := range []string{"@builtin", "@builtin/", "@builtin/*", "@builtin/execute_bash"} {
		t.Run(strings.ReplaceAll(entry, "/", "_"), func(t *testing.T) { checkKiro(t, "", bashAgent(nil, entry), []kiroCase{ls}) })
	}
	ask := writeCase("new.txt", "ask")
	checkKiro(t, "", fileAgent(map[string]any{}, "@builtin/fs_read"), []kiroCase{ask})
	checkKiro(t, "", fileAgent(map[string]any{}, "@builtin/fs_*"), []kiroCase{writeCase("new.txt", "allow")})
	checkKiro(t, "", fileAgent(map[string]any{}, "fs_*"), []kiroCase{writeCase("new.txt", "allow")})
}
