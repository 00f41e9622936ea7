package tool

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-agent/strata/llm"
)

//go:embed fs_read.md
var fsReadDescription string

// Limits of fs_read; the FSRead fields override them when non-zero.
const (
	// DefaultReadMaxBytes caps the text one fs_read operation returns
	// (bytes); Line mode cuts at a line boundary and says where to go on.
	DefaultReadMaxBytes = 100_000
	// DefaultImageMaxBytes caps one image file (bytes); Anthropic's API
	// rejects images over 5 MB.
	DefaultImageMaxBytes = 5 << 20
	// DefaultDirMaxEntries caps the entries of one Directory listing.
	DefaultDirMaxEntries = 1000
)

// maxTextFileBytes is the largest file Line and Search modes load (bytes).
const maxTextFileBytes = 64 << 20

// FSRead is kiro's fs_read tool: an operations array of Line, Directory,
// Search and Image reads (input schema specs/fs_read.json, unchanged from
// kiro). The zero value uses the Default* limits.
type FSRead struct {
	MaxBytes      int // text bytes per operation; 0 = DefaultReadMaxBytes
	MaxImageBytes int // bytes per image file; 0 = DefaultImageMaxBytes
	MaxEntries    int // Directory entries; 0 = DefaultDirMaxEntries
}

// fsReadInput is kiro's fs_read input.
type fsReadInput struct {
	Operations []fsReadOp `json:"operations"`
	Summary    string     `json:"summary"`
}

// fsReadOp is one operation; which fields apply depends on Mode.
type fsReadOp struct {
	Mode         string   `json:"mode"`
	Path         string   `json:"path"`
	ImagePaths   []string `json:"image_paths"`
	StartLine    *int     `json:"start_line"`
	EndLine      *int     `json:"end_line"`
	Pattern      string   `json:"pattern"`
	ContextLines *int     `json:"context_lines"`
	Depth        *int     `json:"depth"`
}

// Spec returns fs_read's spec: kiro's input schema, fs_read.md as description.
func (*FSRead) Spec() llm.ToolSpec { return cachedSpec("fs_read", fsReadDescription) }

// Run runs the operations in order. One operation returns its result or
// error directly. Several (kiro's batch) return one text block per
// operation headed "=== Operation N Result ===" or "=== Operation N Error
// ===", followed by any image blocks; the batch is an error only when every
// operation failed.
func (t *FSRead) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in fsReadInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("fs_read: input: %w", err)
	}
	if len(in.Operations) == 0 {
		return Result{}, errors.New("fs_read: operations is empty; give at least one operation")
	}
	if len(in.Operations) == 1 {
		return t.run(ctx, env, in.Operations[0])
	}
	var text []string
	var images []llm.Block
	failed := 0
	for i, op := range in.Operations {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("fs_read: %w", err)
		}
		res, err := t.run(ctx, env, op)
		if err != nil {
			failed++
			text = append(text, fmt.Sprintf("=== Operation %d Error ===\n%v", i+1, err))
			continue
		}
		var parts []string
		for _, b := range res.Content {
			if b.Type == llm.BlockImage {
				images = append(images, b)
			} else {
				parts = append(parts, b.Text)
			}
		}
		text = append(text, fmt.Sprintf("=== Operation %d Result ===\n%s", i+1, strings.Join(parts, "\n")))
	}
	content := []llm.Block{llm.TextBlock(strings.Join(text, "\n\n"))}
	return Result{Content: append(content, images...), IsError: failed == len(in.Operations)}, nil
}

// run runs one operation.
func (t *FSRead) run(ctx context.Context, env *Env, op fsReadOp) (Result, error) {
	switch op.Mode {
	case "Line":
		return t.line(ctx, env, op)
	case "Directory":
		return t.directory(ctx, env, op)
	case "Search":
		return t.search(ctx, env, op)
	case "Image":
		return t.image(env, op)
	}
	return Result{}, fmt.Errorf("fs_read: unknown mode %q (want Line, Directory, Search or Image)", op.Mode)
}

func (t *FSRead) maxBytes() int { return orDefault(t.MaxBytes, DefaultReadMaxBytes) }

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// readTextFile resolves path and reads it as text: it must be a regular
// file that does not look binary. Invalid UTF-8 is replaced with U+FFFD.
// With Env.Editor set, the content comes from the editor (its buffer).
func readTextFile(ctx context.Context, env *Env, mode, path string) (string, string, error) {
	if path == "" {
		return "", "", fmt.Errorf("fs_read %s: path is required", mode)
	}
	abs, err := ResolvePath(env, path, AccessRead)
	if err != nil {
		return "", "", fmt.Errorf("fs_read %s: %w", mode, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("fs_read %s: %q does not exist", mode, path)
		}
		return "", "", fmt.Errorf("fs_read %s: %w", mode, err)
	}
	if fi.IsDir() {
		return "", "", fmt.Errorf("fs_read %s: %q is a directory; use mode Directory to list it", mode, path)
	}
	if !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("fs_read %s: %q is not a regular file", mode, path)
	}
	if fi.Size() > maxTextFileBytes {
		return "", "", fmt.Errorf("fs_read %s: %q is %d bytes, over the %d-byte limit for text files; use grep or execute_bash (head, sed -n) instead", mode, path, fi.Size(), maxTextFileBytes)
	}
	b, err := readFile(ctx, env, abs)
	if err != nil {
		return "", "", fmt.Errorf("fs_read %s: %w", mode, err)
	}
	if isBinary(b) {
		return "", "", fmt.Errorf("fs_read %s: %q looks like a binary file (%d bytes); use mode Image for images", mode, path, len(b))
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), abs, nil
}

// isBinary reports whether b has a NUL byte in its first 8000 bytes (git's
// heuristic).
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// splitLines splits text into lines without their "\n" (a final newline
// does not start another line; "\r" is kept).
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// lineIndex converts kiro's 1-based line number (negative counts from the
// end, -1 = last line) to a 0-based index, as kiro's convert_negative_index.
func lineIndex(n, i int) int {
	if i <= 0 {
		return max(n+i, 0)
	}
	return i - 1
}

// line is Line mode: lines start_line..end_line (inclusive, kiro semantics;
// start_line 0 reads from the first line), raw text joined with "\n", cut at
// MaxBytes on a line boundary with a notice giving the next start_line.
func (t *FSRead) line(ctx context.Context, env *Env, op fsReadOp) (Result, error) {
	text, _, err := readTextFile(ctx, env, "Line", op.Path)
	if err != nil {
		return Result{}, err
	}
	lines := splitLines(text)
	n := len(lines)
	startLine, endLine := 1, -1
	if op.StartLine != nil && *op.StartLine != 0 {
		startLine = *op.StartLine
	}
	if op.EndLine != nil {
		endLine = *op.EndLine
	}
	if n == 0 {
		return TextResult(fmt.Sprintf("(%s is empty)", op.Path)), nil
	}
	start, end := lineIndex(n, startLine), lineIndex(n, endLine)
	if start >= n {
		return Result{}, fmt.Errorf("fs_read Line: start_line %d is outside the file's %d lines (allowed %d..%d)", startLine, n, -n, n)
	}
	end = min(max(end, start), n-1)
	var b strings.Builder
	limit := t.maxBytes()
	for i := start; i <= end; i++ {
		if b.Len()+len(lines[i])+1 > limit && i > start {
			fmt.Fprintf(&b, "\n[fs_read: output truncated at %d bytes: showing lines %d-%d of %d; continue with start_line=%d]",
				limit, start+1, i, n, i+1)
			return TextResult(b.String()), nil
		}
		if i > start {
			b.WriteByte('\n')
		}
		if len(lines[i]) > limit {
			b.WriteString(clip(lines[i], limit))
			fmt.Fprintf(&b, "\n[fs_read: line %d is %d bytes long and was cut at %d bytes]", i+1, len(lines[i]), limit)
			continue
		}
		b.WriteString(lines[i])
	}
	return TextResult(b.String()), nil
}

// dirEntry is one line of a Directory listing.
type dirEntry struct {
	rel  string // slash path relative to the listed directory
	kind byte   // 'd', '-', 'l' or '?'
	size int64
	link string // symlink target
}

// directory is Directory mode: entries below path down to depth levels (0 =
// direct children), depth-first in name order, one per line as
// "<type> <size> <path>" (type d, -, l; directories end with "/", symlinks
// show "-> target" unless the read policy refuses where they lead; paths
// relative to the workspace root when inside it).
// Symlinked directories and .git are listed but not descended into; entries
// Env.ReadPaths.DeniedPaths cover are left out, as glob and grep leave them.
func (t *FSRead) directory(ctx context.Context, env *Env, op fsReadOp) (Result, error) {
	if op.Path == "" {
		return Result{}, errors.New("fs_read Directory: path is required")
	}
	abs, err := ResolvePath(env, op.Path, AccessRead)
	if err != nil {
		return Result{}, fmt.Errorf("fs_read Directory: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Result{}, fmt.Errorf("fs_read Directory: %q does not exist", op.Path)
		}
		return Result{}, fmt.Errorf("fs_read Directory: %w", err)
	}
	if !fi.IsDir() {
		return Result{}, fmt.Errorf("fs_read Directory: %q is not a directory; use mode Line to read a file", op.Path)
	}
	depth := 0
	if op.Depth != nil && *op.Depth > 0 {
		depth = *op.Depth
	}
	maxEntries := orDefault(t.MaxEntries, DefaultDirMaxEntries)
	deny, err := readDenyList(env)
	if err != nil {
		return Result{}, fmt.Errorf("fs_read Directory: %w", err)
	}
	var entries []dirEntry
	truncated := false
	var walk func(dir, rel string, level int) error
	walk = func(dir, rel string, level int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		des, err := os.ReadDir(dir)
		if err != nil && len(des) == 0 {
			return err
		}
		sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
		for _, de := range des {
			if len(entries) >= maxEntries {
				truncated = true
				return nil
			}
			full := filepath.Join(dir, de.Name())
			if deny.denies(full) {
				continue
			}
			e := dirEntry{rel: pathJoin(rel, de.Name()), kind: '?'}
			info, ierr := de.Info()
			if ierr == nil {
				e.size = info.Size()
			}
			switch {
			case de.Type()&fs.ModeSymlink != 0:
				e.kind = 'l'
				e.link, _ = os.Readlink(full)
				if _, err := ResolvePath(env, full, AccessRead); err != nil {
					// The target names a denied or outside path: not shown,
					// as a denied entry is not (envalias -> .env).
					e.link = "(target not shown: " + linkRefusal(err) + ")"
				}
			case de.IsDir():
				e.kind = 'd'
			case de.Type().IsRegular():
				e.kind = '-'
			}
			entries = append(entries, e)
			if e.kind == 'd' && level < depth && de.Name() != ".git" {
				if err := walk(full, e.rel, level+1); err != nil && ctx.Err() != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(abs, "", 0); err != nil {
		return Result{}, fmt.Errorf("fs_read Directory: %w", err)
	}
	prefix := displayPath(env, abs)
	var b strings.Builder
	for _, e := range entries {
		name := e.rel
		if prefix != "." {
			name = pathJoin(prefix, e.rel)
		}
		switch e.kind {
		case 'd':
			fmt.Fprintf(&b, "d %10s %s/\n", "-", name)
		case 'l':
			fmt.Fprintf(&b, "l %10d %s -> %s\n", e.size, name, e.link)
		default:
			fmt.Fprintf(&b, "%c %10d %s\n", e.kind, e.size, name)
		}
		if b.Len() > t.maxBytes() {
			truncated = true
			break
		}
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if len(entries) == 0 {
		out = fmt.Sprintf("(%s is empty)", op.Path)
	}
	if truncated {
		out = clip(out, t.maxBytes()) + fmt.Sprintf("\n[fs_read: listing truncated at %d entries / %d bytes; list a subdirectory or lower depth]", maxEntries, t.maxBytes())
	}
	return TextResult(out), nil
}

// pathJoin joins slash paths, treating "" as the current directory.
func pathJoin(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

// search is Search mode: kiro's case-insensitive substring search per line,
// with context_lines (default 2) around each match. Matching lines are
// marked "→ N: text", context lines "  N: text"; groups that do not touch
// are separated by "--".
func (t *FSRead) search(ctx context.Context, env *Env, op fsReadOp) (Result, error) {
	if op.Pattern == "" {
		return Result{}, errors.New("fs_read Search: pattern is required and must not be empty")
	}
	text, _, err := readTextFile(ctx, env, "Search", op.Path)
	if err != nil {
		return Result{}, err
	}
	ctxLines := 2
	if op.ContextLines != nil {
		ctxLines = max(*op.ContextLines, 0)
	}
	lines := splitLines(text)
	pat := strings.ToLower(op.Pattern)
	var matches []int
	for i, l := range lines {
		if strings.Contains(strings.ToLower(l), pat) {
			matches = append(matches, i)
		}
	}
	if len(matches) == 0 {
		return TextResult(fmt.Sprintf("No matches for %q in %s.", op.Pattern, op.Path)), nil
	}
	isMatch := make(map[int]bool, len(matches))
	for _, m := range matches {
		isMatch[m] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d matching line(s) for %q in %s:\n", len(matches), op.Pattern, op.Path)
	last := -1 // last line index written
	limit := t.maxBytes()
	for _, m := range matches {
		from, to := max(m-ctxLines, 0), min(m+ctxLines, len(lines)-1)
		if from <= last {
			from = last + 1
		} else if last >= 0 {
			b.WriteString("--\n")
		}
		for i := from; i <= to; i++ {
			mark := "  "
			if isMatch[i] {
				mark = "→ "
			}
			fmt.Fprintf(&b, "%s%d: %s\n", mark, i+1, clip(lines[i], 2000))
			last = i
		}
		if b.Len() > limit {
			return TextResult(clip(b.String(), limit) + fmt.Sprintf("\n[fs_read: search output truncated at %d bytes after line %d; use a narrower pattern or read lines with mode Line]", limit, last+1)), nil
		}
	}
	return TextResult(strings.TrimSuffix(b.String(), "\n")), nil
}

// imageTypes are the image media types fs_read returns, by extension (the
// formats Anthropic and OpenAI accept).
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
}

// image is Image mode: each of image_paths (or path when image_paths is
// empty) becomes an image block with its media type, preceded by one text
// block naming the files. The content must sniff as the image type its
// extension says, and be at most MaxImageBytes.
func (t *FSRead) image(env *Env, op fsReadOp) (Result, error) {
	paths := op.ImagePaths
	if len(paths) == 0 && op.Path != "" {
		paths = []string{op.Path}
	}
	if len(paths) == 0 {
		return Result{}, errors.New("fs_read Image: image_paths is required")
	}
	limit := orDefault(t.MaxImageBytes, DefaultImageMaxBytes)
	var names []string
	var blocks []llm.Block
	for _, p := range paths {
		abs, err := ResolvePath(env, p, AccessRead)
		if err != nil {
			return Result{}, fmt.Errorf("fs_read Image: %w", err)
		}
		want, ok := imageTypes[strings.ToLower(filepath.Ext(abs))]
		if !ok {
			return Result{}, fmt.Errorf("fs_read Image: %q is not a supported image type (png, jpg, jpeg, gif, webp)", p)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Result{}, fmt.Errorf("fs_read Image: %q does not exist", p)
			}
			return Result{}, fmt.Errorf("fs_read Image: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return Result{}, fmt.Errorf("fs_read Image: %q is not a file", p)
		}
		if fi.Size() > int64(limit) {
			return Result{}, fmt.Errorf("fs_read Image: %q is %d bytes, over the %d-byte image limit", p, fi.Size(), limit)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return Result{}, fmt.Errorf("fs_read Image: %w", err)
		}
		if got := http.DetectContentType(data); got != want {
			return Result{}, fmt.Errorf("fs_read Image: %q does not contain %s data (content looks like %s)", p, want, got)
		}
		names = append(names, fmt.Sprintf("%s (%s, %d bytes)", displayPath(env, abs), want, len(data)))
		blocks = append(blocks, llm.Block{Type: llm.BlockImage, MediaType: want, Data: data})
	}
	head := llm.TextBlock(fmt.Sprintf("Read %d image(s): %s", len(blocks), strings.Join(names, ", ")))
	return Result{Content: append([]llm.Block{head}, blocks...)}, nil
}

// linkRefusal says in a few words why a symlink's target is not shown.
func linkRefusal(err error) string {
	if errors.Is(err, ErrSandbox) {
		return "it leads to a path the read policy refuses"
	}
	return "it cannot be resolved"
}
