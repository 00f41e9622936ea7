package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFSWriteCreate(t *testing.T) {
	ws := workspace(t, map[string]string{"old.txt": "before\n"})
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "fs_write", `{"command":"create","path":"new/dir/f.txt","file_text":"hello\nworld","summary":"make f"}`))
	if c := read(t, filepath.Join(ws, "new/dir/f.txt")); c != "hello\nworld\n" {
		t.Errorf("created content %q (want a final newline added, as kiro)", c)
	}
	want := "Created new/dir/f.txt\n\n--- /dev/null\n+++ b/new/dir/f.txt\n@@ -0,0 +1,2 @@\n+hello\n+world"
	if got != want {
		t.Errorf("create result:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, call(t, env, "fs_write", `{"command":"create","path":"old.txt","file_text":"after\n"}`))
	mustContain(t, got, "Replaced old.txt", "--- a/old.txt", "+++ b/old.txt", "-before", "+after")
	// kiro falls back to new_str when file_text is missing.
	ok(t, call(t, env, "fs_write", `{"command":"create","path":"fallback.txt","new_str":"via new_str"}`))
	if c := read(t, filepath.Join(ws, "fallback.txt")); c != "via new_str\n" {
		t.Errorf("fallback content %q", c)
	}
	failed(t, call(t, env, "fs_write", `{"command":"create","path":"none.txt"}`), "file_text is required")
	failed(t, call(t, env, "fs_write", `{"command":"create","path":"new","file_text":"x"}`), "is a directory")
	ok(t, call(t, env, "fs_write", `{"command":"create","path":"empty.txt","file_text":""}`))
	if c := read(t, filepath.Join(ws, "empty.txt")); c != "" {
		t.Errorf("empty create wrote %q", c)
	}
}

func TestFSWriteCreateKeepsMode(t *testing.T) {
	ws := workspace(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	p := filepath.Join(ws, "run.sh")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	ok(t, call(t, &Env{Workdir: ws}, "fs_write", `{"command":"create","path":"run.sh","file_text":"#!/bin/sh\necho hi\n"}`))
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755 kept", fi.Mode().Perm())
	}
}

func TestFSWriteStrReplace(t *testing.T) {
	ws := workspace(t, map[string]string{
		"f.go":    "package f\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n",
		"nonl.go": "x := 1",
	})
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "fs_write", `{"command":"str_replace","path":"f.go","old_str":"func A() int { return 1 }","new_str":"func A() int { return 2 }"}`))
	if c := read(t, filepath.Join(ws, "f.go")); c != "package f\n\nfunc A() int { return 2 }\n\nfunc B() int { return 1 }\n" {
		t.Errorf("content after str_replace:\n%s", c)
	}
	want := "Replaced 1 occurrence of old_str in f.go\n\n--- a/f.go\n+++ b/f.go\n@@ -1,5 +1,5 @@\n package f\n \n-func A() int { return 1 }\n+func A() int { return 2 }\n \n func B() int { return 1 }"
	if got != want {
		t.Errorf("str_replace result:\n%s\nwant:\n%s", got, want)
	}
	before := read(t, filepath.Join(ws, "f.go"))
	failed(t, call(t, env, "fs_write", `{"command":"str_replace","path":"f.go","old_str":"return 3","new_str":"x"}`), "0 occurrences", "return 3")
	failed(t, call(t, env, "fs_write", `{"command":"str_replace","path":"f.go","old_str":"int { return","new_str":"x"}`), "occurs 2 times", "exactly once")
	if read(t, filepath.Join(ws, "f.go")) != before {
		t.Error("a failed str_replace changed the file")
	}
	failed(t, call(t, env, "fs_write", `{"command":"str_replace","path":"f.go","old_str":"package f"}`), "new_str is required")
	failed(t, call(t, env, "fs_write", `{"command":"str_replace","path":"f.go","old_str":"","new_str":"x"}`), "old_str is required")
	failed(t, call(t, env, "fs_write", `{"command":"str_replace","path":"nope.go","old_str":"a","new_str":"b"}`), "does not exist")
	// str_replace changes only the replaced bytes: no newline is added.
	ok(t, call(t, env, "fs_write", `{"command":"str_replace","path":"nonl.go","old_str":"1","new_str":""}`))
	if c := read(t, filepath.Join(ws, "nonl.go")); c != "x := " {
		t.Errorf("deletion wrote %q", c)
	}
}

func TestFSWriteInsert(t *testing.T) {
	cases := []struct {
		name, content, input, want string
	}{
		{"after line 1", "a\nb\nc\n", `"insert_line":1,"new_str":"X"`, "a\nX\nb\nc\n"},
		{"at start", "a\nb\n", `"insert_line":0,"new_str":"X\nY\n"`, "X\nY\na\nb\n"},
		{"at end", "a\nb\n", `"insert_line":2,"new_str":"X"`, "a\nb\nX\n"},
		{"past end clamps", "a\nb\n", `"insert_line":99,"new_str":"X"`, "a\nb\nX\n"},
		{"end without newline", "a\nb", `"insert_line":2,"new_str":"X"`, "a\nb\nX\n"},
		{"empty file", "", `"insert_line":0,"new_str":"X"`, "X\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace(t, map[string]string{"f.txt": c.content})
			got := ok(t, call(t, &Env{Workdir: ws}, "fs_write", `{"command":"insert","path":"f.txt",`+c.input+`}`))
			if f := read(t, filepath.Join(ws, "f.txt")); f != c.want {
				t.Errorf("content %q, want %q", f, c.want)
			}
			mustContain(t, got, "Inserted text after line", "--- a/f.txt", "+X")
		})
	}
	ws := workspace(t, map[string]string{"f.txt": "a\n"})
	env := &Env{Workdir: ws}
	failed(t, call(t, env, "fs_write", `{"command":"insert","path":"f.txt","new_str":"x"}`), "insert_line is required")
	failed(t, call(t, env, "fs_write", `{"command":"insert","path":"f.txt","insert_line":-1,"new_str":"x"}`), "0 or more")
	failed(t, call(t, env, "fs_write", `{"command":"insert","path":"f.txt","insert_line":1}`), "new_str is required")
}

func TestFSWriteAppend(t *testing.T) {
	ws := workspace(t, map[string]string{"log.txt": "one", "two.txt": "1\n"})
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "fs_write", `{"command":"append","path":"log.txt","new_str":"two"}`))
	if c := read(t, filepath.Join(ws, "log.txt")); c != "one\ntwo\n" {
		t.Errorf("append content %q", c)
	}
	mustContain(t, got, "Appended text to log.txt", "-one", "+one", "+two")
	ok(t, call(t, env, "fs_write", `{"command":"append","path":"two.txt","new_str":"2\n"}`))
	if c := read(t, filepath.Join(ws, "two.txt")); c != "1\n2\n" {
		t.Errorf("append content %q", c)
	}
	failed(t, call(t, env, "fs_write", `{"command":"append","path":"missing.txt","new_str":"x"}`), "does not exist")
	failed(t, call(t, env, "fs_write", `{"command":"append","path":"log.txt","new_str":""}`), "must not be empty")
}

func TestFSWriteDiffCapAndBinary(t *testing.T) {
	ws := workspace(t, map[string]string{"bin": "a\x00b"})
	env := &Env{Workdir: ws}
	r := NewRegistry(&FSWrite{MaxDiffBytes: 100})
	got := ok(t, callWith(t, r, env, "fs_write", `{"command":"create","path":"big.txt","file_text":"`+strings.Repeat("line\\n", 200)+`"}`))
	mustContain(t, got, "diff truncated at 100 of")
	failed(t, call(t, env, "fs_write", `{"command":"append","path":"bin","new_str":"x"}`), "binary")
	got = ok(t, call(t, env, "fs_write", `{"command":"create","path":"big.txt","file_text":"`+strings.Repeat("line\\n", 200)+`"}`))
	mustContain(t, got, "no changes")
}
