package tool

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

func lineOp(path string, extra string) string {
	return `{"operations":[{"mode":"Line","path":"` + path + `"` + extra + `}]}`
}

func TestFSReadLineRanges(t *testing.T) {
	ws := workspace(t, map[string]string{
		"five.txt":  "one\ntwo\nthree\nfour\nfive\n",
		"nonl.txt":  "a\nb",
		"empty.txt": "",
	})
	env := &Env{Workdir: ws}
	cases := []struct{ path, extra, want string }{
		{"five.txt", ``, "one\ntwo\nthree\nfour\nfive"},
		{"five.txt", `,"start_line":2,"end_line":3`, "two\nthree"},
		{"five.txt", `,"start_line":-2`, "four\nfive"},
		{"five.txt", `,"start_line":-1,"end_line":-1`, "five"},
		{"five.txt", `,"start_line":1,"end_line":-4`, "one\ntwo"},
		{"five.txt", `,"start_line":4,"end_line":99`, "four\nfive"},
		{"five.txt", `,"start_line":3,"end_line":1`, "three"}, // end < start reads start (kiro)
		{"five.txt", `,"start_line":-100,"end_line":1`, "one"},
		{"five.txt", `,"start_line":0,"end_line":1`, "one"},
		{"nonl.txt", ``, "a\nb"},
		{"empty.txt", ``, "(empty.txt is empty)"},
		{filepath.Join(ws, "five.txt"), `,"start_line":5`, "five"},
	}
	for _, c := range cases {
		if got := ok(t, call(t, env, "fs_read", lineOp(c.path, c.extra))); got != c.want {
			t.Errorf("%s%s: got %q, want %q", c.path, c.extra, got, c.want)
		}
	}
	failed(t, call(t, env, "fs_read", lineOp("five.txt", `,"start_line":6`)), "start_line 6", "5 lines")
	failed(t, call(t, env, "fs_read", lineOp("missing.txt", ``)), `"missing.txt" does not exist`)
	failed(t, call(t, env, "fs_read", lineOp(".", ``)), "is a directory")
}

func TestFSReadLineTruncates(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("x", 90))
	}
	ws := workspace(t, map[string]string{"big.txt": b.String(), "long.txt": strings.Repeat("y", 5000)})
	r := NewRegistry(&FSRead{MaxBytes: 2000})
	env := &Env{Workdir: ws}
	got := ok(t, callWith(t, r, env, "fs_read", lineOp("big.txt", "")))
	mustContain(t, got, "line 0001", "output truncated at 2000 bytes", "of 1000", "continue with start_line=")
	if strings.Contains(got, "line 0100") || len(got) > 2300 {
		t.Errorf("output not capped (%d bytes)", len(got))
	}
	got = ok(t, callWith(t, r, env, "fs_read", lineOp("long.txt", "")))
	mustContain(t, got, "line 1 is 5000 bytes long")
}

func TestFSReadDirectory(t *testing.T) {
	ws := workspace(t, map[string]string{
		"b.txt":         "12345",
		"a/inner.go":    "package a\n",
		"a/deep/x.md":   "x",
		".git/HEAD":     "ref",
		"z/empty/.keep": "",
	})
	if err := os.Symlink("b.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":"."}]}`))
	want := []string{
		"d          - .git/",
		"d          - a/",
		"-          5 b.txt",
		"l          5 link -> b.txt",
		"d          - z/",
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("depth 0 listing:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	got = ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":"a","depth":1}]}`))
	want = []string{
		"d          - a/deep/",
		"-          1 a/deep/x.md",
		"-         10 a/inner.go",
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("depth 1 listing of a:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	got = ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":".","depth":5}]}`))
	if strings.Contains(got, ".git/HEAD") || !strings.Contains(got, "z/empty/.keep") {
		t.Errorf("deep listing should skip .git contents and reach z/empty/.keep:\n%s", got)
	}
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Directory","path":"b.txt"}]}`), "not a directory")
	r := NewRegistry(&FSRead{MaxEntries: 2})
	got = ok(t, callWith(t, r, env, "fs_read", `{"operations":[{"mode":"Directory","path":"."}]}`))
	mustContain(t, got, "listing truncated at 2 entries")
}

func TestFSReadSearch(t *testing.T) {
	ws := workspace(t, map[string]string{"f.txt": "alpha\nbeta\nGamma ray\ndelta\nepsilon\nzeta\neta\ntheta gamma\n"})
	env := &Env{Workdir: ws}
	got := ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Search","path":"f.txt","pattern":"GAMMA","context_lines":1}]}`))
	want := "2 matching line(s) for \"GAMMA\" in f.txt:\n  2: beta\n→ 3: Gamma ray\n  4: delta\n--\n  7: eta\n→ 8: theta gamma"
	if got != want {
		t.Errorf("search:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, call(t, env, "fs_read", `{"operations":[{"mode":"Search","path":"f.txt","pattern":"zzz"}]}`))
	mustContain(t, got, "No matches")
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Search","path":"f.txt","pattern":""}]}`), "pattern is required")
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFSReadImage(t *testing.T) {
	img := pngBytes(t)
	ws := workspace(t, map[string]string{"pic.png": string(img), "fake.png": "not an image", "notes.txt": "x"})
	env := &Env{Workdir: ws}
	b := call(t, env, "fs_read", `{"operations":[{"mode":"Image","image_paths":["pic.png"]}]}`)
	ok(t, b)
	if len(b.Content) != 2 || b.Content[1].Type != llm.BlockImage || b.Content[1].MediaType != "image/png" || !bytes.Equal(b.Content[1].Data, img) {
		t.Fatalf("image result: %+v", b.Content)
	}
	mustContain(t, text(b), "pic.png", "image/png")
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Image","image_paths":["fake.png"]}]}`), "does not contain image/png data")
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Image","image_paths":["notes.txt"]}]}`), "not a supported image type")
	failed(t, call(t, env, "fs_read", `{"operations":[{"mode":"Image"}]}`), "image_paths is required")
	r := NewRegistry(&FSRead{MaxImageBytes: 10})
	failed(t, callWith(t, r, env, "fs_read", `{"operations":[{"mode":"Image","image_paths":["pic.png"]}]}`), "image limit")
}

func TestFSReadBatch(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "A\n", "pic.png": string(pngBytes(t))})
	env := &Env{Workdir: ws}
	b := call(t, env, "fs_read", `{"summary":"look around","operations":[
		{"mode":"Line","path":"a.txt"},
		{"mode":"Line","path":"missing.txt"},
		{"mode":"Image","image_paths":["pic.png"]}]}`)
	got := ok(t, b)
	mustContain(t, got, "=== Operation 1 Result ===\nA", "=== Operation 2 Error ===", "does not exist", "=== Operation 3 Result ===")
	if last := b.Content[len(b.Content)-1]; last.Type != llm.BlockImage {
		t.Errorf("batch should end with the image block, got %+v", last.Type)
	}
	b = call(t, env, "fs_read", `{"operations":[{"mode":"Line","path":"x"},{"mode":"Line","path":"y"}]}`)
	failed(t, b, "Operation 2 Error")
}

func TestFSReadBinaryFile(t *testing.T) {
	ws := workspace(t, map[string]string{"bin.dat": "ab\x00cd"})
	failed(t, call(t, &Env{Workdir: ws}, "fs_read", lineOp("bin.dat", "")), "binary")
}
