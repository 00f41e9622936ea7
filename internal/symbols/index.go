package symbols

import (
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/strata-agent/strata/prompt"
)

// Index limits (bytes, files).
const (
	DefaultMaxFileBytes = 512 << 10 // larger files are skipped (generated or minified code)
	DefaultMaxFiles     = 5000      // at most this many files are parsed per map
)

// Index builds symbol maps of one repository and caches each file's parse
// by path, size and modification time, so a map rebuilt every request
// re-parses only the files that changed. Safe for concurrent use.
type Index struct {
	Root         string // repository root the paths are relative to
	MaxFileBytes int64  // 0 = DefaultMaxFileBytes
	MaxFiles     int    // 0 = DefaultMaxFiles
	// ReadFile reads a file (absolute path) of at most max bytes; nil =
	// os.ReadFile. The runtime passes the workspace sandbox's reader
	// (tool.ReadFileIn), so a symlink or hard link out of the repository
	// is not parsed.
	ReadFile func(path string, max int64) ([]byte, error)

	mu    sync.Mutex
	cache map[string]cached
}

// read is ReadFile, or os.ReadFile.
func (x *Index) read(path string, max int64) ([]byte, error) {
	if x.ReadFile != nil {
		return x.ReadFile(path, max)
	}
	return os.ReadFile(path)
}

type cached struct {
	size  int64
	mtime int64
	file  *File // nil: unsupported or no symbols
}

// Map returns the symbol map of paths (slash-separated, relative to Root),
// one block per file of a supported language that declares something,
// sorted by path, with the legend of the aliases chosen for those paths.
// Unreadable, oversized and unsupported files are left out (the map is a
// guide, not an inventory; the file tree lists every file). It returns nil
// when no file has symbols.
func (x *Index) Map(paths []string) *prompt.SymbolMap {
	maxBytes, maxFiles := x.MaxFileBytes, x.MaxFiles
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cache == nil {
		x.cache = map[string]cached{}
	}
	var files []*File
	seen := map[string]bool{}
	parsed := 0
	for _, p := range paths {
		if Language(p) == "" || parsed >= maxFiles {
			continue
		}
		parsed++
		seen[p] = true
		st, err := os.Lstat(filepath.Join(x.Root, filepath.FromSlash(p))) // a symlink is not a regular file: not followed
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxBytes {
			continue
		}
		c, ok := x.cache[p]
		if !ok || c.size != st.Size() || c.mtime != st.ModTime().UnixNano() {
			c = cached{size: st.Size(), mtime: st.ModTime().UnixNano()}
			if src, err := x.read(filepath.Join(x.Root, filepath.FromSlash(p)), maxBytes); err == nil {
				if f, err := Parse(p, src); err == nil && len(f.Symbols) > 0 {
					c.file = f
				}
			}
			x.cache[p] = c
		}
		if c.file != nil {
			files = append(files, c.file)
		}
	}
	for p := range x.cache {
		if !seen[p] {
			delete(x.cache, p)
		}
	}
	if len(files) == 0 {
		return nil
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	al := NewAliases(names)
	m := &prompt.SymbolMap{Legend: al.Legend()}
	for _, f := range files {
		m.Blocks = append(m.Blocks, prompt.SymbolBlock{Path: f.Path, Text: Block(f, al)})
	}
	return m
}
