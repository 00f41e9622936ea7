package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/strata-agent/strata/llm"
)

//go:embed fs_write.md
var fsWriteDescription string

// DefaultDiffMaxBytes caps the unified diff in an fs_write result (bytes).
const DefaultDiffMaxBytes = 20_000

// FSWrite is kiro's fs_write tool: create, str_replace, insert and append
// (input schema specs/fs_write.json, unchanged from kiro). Every result
// carries a unified diff of the change. The zero value is ready to use.
type FSWrite struct {
	MaxDiffBytes int // diff bytes in the result; 0 = DefaultDiffMaxBytes
}

// fsWriteInput is kiro's fs_write input. Pointers tell a missing field from
// an empty one.
type fsWriteInput struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	FileText   *string `json:"file_text"`
	InsertLine *int    `json:"insert_line"`
	NewStr     *string `json:"new_str"`
	OldStr     *string `json:"old_str"`
	Summary    string  `json:"summary"`
}

// Spec returns fs_write's spec: kiro's input schema, fs_write.md as
// description.
func (*FSWrite) Spec() llm.ToolSpec { return cachedSpec("fs_write", fsWriteDescription) }

// Run applies one command, following kiro's semantics:
//
//   - create writes file_text (kiro falls back to new_str when file_text is
//     missing), replacing an existing file and making parent directories;
//   - str_replace replaces old_str, which must occur exactly once (the error
//     says how many times it occurs otherwise), with new_str;
//   - insert puts new_str after line insert_line (clamped to 0..line count;
//     0 = at the start), on lines of its own;
//   - append adds new_str at the end of an existing file, after a newline
//     if the file does not end with one.
//
// create, insert and append end the file with a newline (kiro); str_replace
// changes exactly the replaced bytes. An existing file keeps its mode; new
// files get 0644. Edits of files that look binary are refused.
func (t *FSWrite) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	e, err := t.plan(ctx, env, input)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("fs_write %s: not written: %w", e.in.Command, err)
	}
	if e.in.Command == "create" {
		if err := os.MkdirAll(filepath.Dir(e.abs), 0o755); err != nil {
			return Result{}, fmt.Errorf("fs_write create: %w", err)
		}
	}
	if err := writeFile(ctx, env, e.abs, e.updated, e.mode); err != nil {
		return Result{}, fmt.Errorf("fs_write %s: %w", e.in.Command, err)
	}
	return TextResult(fmt.Sprintf("%s %s\n\n%s", e.summary, e.rel, e.diff(t))), nil
}

// Preview returns what Run would write for input, without writing: the
// unified diff its result would carry (whole, not capped), read through
// env's path rules. The error is the one Run would return.
func (t *FSWrite) Preview(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	e, err := t.plan(ctx, env, input)
	if err != nil {
		return "", err
	}
	whole := FSWrite{MaxDiffBytes: math.MaxInt}
	return e.diff(&whole), nil
}

// edit is one planned fs_write: the file, its content before and after.
type edit struct {
	in           fsWriteInput
	abs, rel     string
	old, updated string
	summary      string
	mode         fs.FileMode
	existed      bool
}

// diff is the edit's unified diff (or why there is none).
func (e edit) diff(t *FSWrite) string {
	d, err := t.diff(e.rel, e.old, e.updated, e.existed)
	if err != nil {
		return fmt.Sprintf("(diff unavailable: %v)", err)
	}
	return d
}

// plan resolves and reads the file of input and computes its new content.
func (t *FSWrite) plan(ctx context.Context, env *Env, input json.RawMessage) (edit, error) {
	var e edit
	in := &e.in
	if err := json.Unmarshal(input, in); err != nil {
		return e, fmt.Errorf("fs_write: input: %w", err)
	}
	if in.Path == "" {
		return e, errors.New("fs_write: path is required")
	}
	var err error
	if e.abs, err = ResolvePath(env, in.Path, AccessWrite); err != nil {
		return e, fmt.Errorf("fs_write %s: %w", in.Command, err)
	}
	if e.old, e.mode, e.existed, err = readForWrite(ctx, env, e.abs, in.Path); err != nil {
		return e, fmt.Errorf("fs_write %s: %w", in.Command, err)
	}
	if e.existed && in.Command != "create" && isBinary([]byte(e.old)) {
		return e, fmt.Errorf("fs_write %s: %q looks like a binary file; only text files can be edited", in.Command, in.Path)
	}
	switch in.Command {
	case "create":
		e.updated, e.summary, err = create(*in, e.existed)
	case "str_replace":
		e.updated, e.summary, err = strReplace(*in, e.old, e.existed)
	case "insert":
		e.updated, e.summary, err = insert(*in, e.old, e.existed)
	case "append":
		e.updated, e.summary, err = appendText(*in, e.old, e.existed)
	default:
		err = fmt.Errorf("unknown command %q (want create, str_replace, insert or append)", in.Command)
	}
	if err != nil {
		return e, fmt.Errorf("fs_write %s: %w", in.Command, err)
	}
	e.rel = displayPath(env, e.abs)
	return e, nil
}

// readForWrite returns the current content and mode of abs, or "" and 0644
// when it does not exist yet. A directory is an error.
func readForWrite(ctx context.Context, env *Env, abs, path string) (string, fs.FileMode, bool, error) {
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0o644, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if fi.IsDir() {
		return "", 0, false, fmt.Errorf("%q is a directory", path)
	}
	if !fi.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("%q is not a regular file", path)
	}
	if fi.Size() > maxTextFileBytes {
		return "", 0, false, fmt.Errorf("%q is %d bytes, over the %d-byte limit for edits", path, fi.Size(), maxTextFileBytes)
	}
	b, err := readFile(ctx, env, abs)
	if err != nil {
		return "", 0, false, err
	}
	return string(b), fi.Mode().Perm(), true, nil
}

// withNewline returns s ending with "\n" unless it is empty.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func create(in fsWriteInput, existed bool) (string, string, error) {
	text := in.FileText
	if text == nil {
		text = in.NewStr // kiro's fallback
	}
	if text == nil {
		return "", "", errors.New("file_text is required (the content of the file)")
	}
	verb := "Created"
	if existed {
		verb = "Replaced"
	}
	return withNewline(*text), verb, nil
}

func strReplace(in fsWriteInput, old string, existed bool) (string, string, error) {
	if !existed {
		return "", "", fmt.Errorf("%q does not exist; use command create to make it", in.Path)
	}
	if in.OldStr == nil || *in.OldStr == "" {
		return "", "", errors.New("old_str is required and must not be empty")
	}
	if in.NewStr == nil {
		return "", "", errors.New(`new_str is required (use "" to delete old_str)`)
	}
	switch n := strings.Count(old, *in.OldStr); n {
	case 1:
		return strings.Replace(old, *in.OldStr, *in.NewStr, 1), "Replaced 1 occurrence of old_str in", nil
	case 0:
		return "", "", fmt.Errorf("old_str was not found in %q (0 occurrences); it must match the file exactly, including whitespace and indentation: %q",
			in.Path, clip(*in.OldStr, 300))
	default:
		return "", "", fmt.Errorf("old_str occurs %d times in %q; it must occur exactly once: include more surrounding lines to make it unique", n, in.Path)
	}
}

func insert(in fsWriteInput, old string, existed bool) (string, string, error) {
	if !existed {
		return "", "", fmt.Errorf("%q does not exist; use command create to make it", in.Path)
	}
	if in.InsertLine == nil {
		return "", "", errors.New("insert_line is required (the line after which new_str goes; 0 = at the start)")
	}
	if *in.InsertLine < 0 {
		return "", "", fmt.Errorf("insert_line is %d; it must be 0 or more", *in.InsertLine)
	}
	if in.NewStr == nil {
		return "", "", errors.New("new_str is required (the text to insert)")
	}
	line := min(*in.InsertLine, len(splitLines(old)))
	// offset is the byte just after line `line` (0 = start of file).
	offset := 0
	for i := 0; i < line; i++ {
		nl := strings.IndexByte(old[offset:], '\n')
		if nl < 0 {
			offset = len(old)
			break
		}
		offset += nl + 1
	}
	ins := *in.NewStr
	if offset < len(old) && !strings.HasSuffix(ins, "\n") {
		ins += "\n"
	}
	if offset == len(old) && old != "" && !strings.HasSuffix(old, "\n") {
		ins = "\n" + ins
	}
	updated := withNewline(old[:offset] + ins + old[offset:])
	return updated, fmt.Sprintf("Inserted text after line %d of", line), nil
}

func appendText(in fsWriteInput, old string, existed bool) (string, string, error) {
	if !existed {
		return "", "", fmt.Errorf("%q does not exist; append needs an existing file (use create)", in.Path)
	}
	if in.NewStr == nil || *in.NewStr == "" {
		return "", "", errors.New("new_str is required and must not be empty (the text to append)")
	}
	return withNewline(withNewline(old) + *in.NewStr), "Appended text to", nil
}

// diff returns a unified diff (3 lines of context) from old to updated,
// labelled a/<rel> and b/<rel> (/dev/null for a new file), capped at
// MaxDiffBytes.
func (t *FSWrite) diff(rel, old, updated string, existed bool) (string, error) {
	if old == updated {
		return "(no changes: the file already had this content)", nil
	}
	from := "a/" + rel
	if !existed {
		from = "/dev/null"
	}
	d, err := udiff.ToUnified(from, "b/"+rel, old, udiff.Strings(old, updated), udiff.DefaultContextLines)
	if err != nil {
		return "", err
	}
	limit := orDefault(t.MaxDiffBytes, DefaultDiffMaxBytes)
	if len(d) > limit {
		d = clip(d, limit) + fmt.Sprintf("\n[fs_write: diff truncated at %d of %d bytes]", limit, len(d))
	}
	return strings.TrimSuffix(d, "\n"), nil
}
