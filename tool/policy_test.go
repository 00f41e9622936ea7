package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each tool resolves with its own access's policy: reads (fs_read, grep,
// glob, todo_list load/lookup) with ReadPaths, writes (fs_write, todo_list
// saves) with WritePaths plus ReadPaths' denied paths. A directory allowed
// for reading is not writable, one allowed for writing is not readable, and
// a write-denied path stays readable.
func TestAttackPathPoliciesPerAccess(t *testing.T) {
	readOnly := workspace(t, map[string]string{"doc.txt": "docs\n"})
	writeOnly := workspace(t, map[string]string{"out.txt": "out\n"})
	ws := workspace(t, map[string]string{"gen/a.txt": "generated\n", ".env": "KEY=1\n", "src/main.go": "package main\n"})
	env := &Env{
		Workdir:    ws,
		ReadPaths:  PathPolicy{AllowedPaths: []string{readOnly}, DeniedPaths: []string{".env"}},
		WritePaths: PathPolicy{AllowedPaths: []string{writeOnly}, DeniedPaths: []string{"gen", ".amazonq"}},
	}
	q := jsonString
	line := func(p string) string { return `{"operations":[{"mode":"Line","path":` + q(p) + `}]}` }
	create := func(p string) string { return `{"command":"create","path":` + q(p) + `,"file_text":"new"}` }
	cases := []struct {
		name, tool, input string
		want              string // substring of the result
		isError           bool
	}{
		{"read-allowed dir is readable", "fs_read", line(filepath.Join(readOnly, "doc.txt")), "docs", false},
		{"read-allowed dir is searchable", "grep", `{"pattern":"docs","path":` + q(readOnly) + `}`, "doc.txt:1:docs", false},
		{"read-allowed dir is listable", "glob", `{"pattern":"*","path":` + q(readOnly) + `}`, "doc.txt", false},
		{"read-allowed dir is not writable", "fs_write", create(filepath.Join(readOnly, "new.txt")),
			"the read policy's allowedPaths make it readable, not writable", true},
		{"read-allowed file is not editable", "fs_write",
			`{"command":"append","path":` + q(filepath.Join(readOnly, "doc.txt")) + `,"new_str":"x"}`, "outside the workspace root", true},
		{"write-allowed dir is writable", "fs_write", create(filepath.Join(writeOnly, "new.txt")), "Created", false},
		{"write-allowed dir is not readable", "fs_read", line(filepath.Join(writeOnly, "out.txt")), "outside the workspace root", true},
		{"write-denied dir is readable", "fs_read", line("gen/a.txt"), "generated", false},
		{"write-denied dir is not writable", "fs_write", create("gen/a.txt"), `deniedPaths pattern "gen" of the write policy`, true},
		{"read-denied file is not writable", "fs_write", create(".env"), `deniedPaths pattern ".env" of the read policy`, true},
		{"read-denied file is not readable", "fs_read", line(".env"), `deniedPaths pattern ".env" of the read policy`, true},
		{"workspace is writable", "fs_write", create("src/new.go"), "Created", false},
		{"todo_list saves with the write policy", "todo_list", `{"command":"create","tasks":["a"],"todo_list_description":"d"}`,
			`deniedPaths pattern ".amazonq" of the write policy`, true},
		{"todo_list lists with the read policy", "todo_list", `{"command":"lookup"}`, "No TODO lists saved.", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, env, c.tool, c.input)
			if got := text(r); r.IsError != c.isError || !strings.Contains(got, c.want) {
				t.Errorf("%s %s: is_error=%v %q; want is_error=%v containing %q", c.tool, c.input, r.IsError, got, c.isError, c.want)
			}
		})
	}
	for p, want := range map[string]string{
		filepath.Join(readOnly, "doc.txt"): "docs\n", filepath.Join(ws, "gen/a.txt"): "generated\n", filepath.Join(ws, ".env"): "KEY=1\n",
	} {
		if got := read(t, p); got != want {
			t.Errorf("%s was changed to %q", p, got)
		}
	}
	for _, p := range []string{filepath.Join(readOnly, "new.txt"), filepath.Join(ws, ".amazonq")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// A nil Env and the zero PathPolicy allow the workspace root only.
func TestPolicyOfNilEnv(t *testing.T) {
	var e *Env
	if p := e.Policy(AccessWrite); p.AllowedPaths != nil || p.DeniedPaths != nil {
		t.Errorf("nil Env: %+v", p)
	}
	if AccessRead.String() != "read" || AccessWrite.String() != "write" {
		t.Errorf("Access names: %s, %s", AccessRead, AccessWrite)
	}
}
