package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	ignore "github.com/sabhiram/go-gitignore"
)

// ignoreRules are the .gitignore files that apply during a walk, each with
// the directory it sits in.
type ignoreRules struct {
	dirs []string
	gis  []*ignore.GitIgnore
}

// load adds dir/.gitignore when it exists and is readable.
func (r *ignoreRules) load(dir string) {
	gi, err := ignore.CompileIgnoreFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return
	}
	r.dirs = append(r.dirs, dir)
	r.gis = append(r.gis, gi)
}

// ignored reports whether a .gitignore in one of p's ancestors ignores p.
// Directories are matched with a trailing "/", so "build/" rules apply.
func (r *ignoreRules) ignored(p string, isDir bool) bool {
	for i, dir := range r.dirs {
		if p == dir || !within(dir, p) {
			continue
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if isDir {
			rel += "/"
		}
		if r.gis[i].MatchesPath(rel) {
			return true
		}
	}
	return false
}

// walkTree calls fn for every entry below root (an absolute, resolved
// directory; root itself is not passed), depth-first in lexical order, with
// its absolute path. It skips .git directories, entries ignored by the
// .gitignore files of root, its subdirectories and its ancestors up to the
// workspace root (as git applies them: each to its own directory and below),
// and entries Env.ReadPaths.DeniedPaths covers. When root itself is ignored by an
// ancestor's rules, those rules are dropped: an explicitly named directory
// is searched. Symlinks are passed to fn, not followed. Unreadable
// directories are skipped. fn returns fs.SkipDir to skip a directory,
// fs.SkipAll to stop, or another error to abort the walk with it.
func walkTree(ctx context.Context, env *Env, root string, fn func(path string, d fs.DirEntry) error) error {
	ws, err := workspaceRoot(env)
	if err != nil {
		return err
	}
	deny := compileDenied(env, ws, AccessRead)
	ws = mustReal(ws)
	rules := &ignoreRules{}
	if within(ws, root) && root != ws {
		var ancestors []string
		for d := filepath.Dir(root); within(ws, d); d = filepath.Dir(d) {
			ancestors = append(ancestors, d)
			if d == ws {
				break
			}
		}
		for i := len(ancestors) - 1; i >= 0; i-- {
			rules.load(ancestors[i])
		}
		if rules.ignored(root, true) {
			rules = &ignoreRules{}
		}
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == root {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == root {
			rules.load(p)
			return nil
		}
		isDir := d.IsDir()
		if isDir && d.Name() == ".git" {
			return fs.SkipDir
		}
		if rules.ignored(p, isDir) || deny.denies(p) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		if err := fn(p, d); err != nil {
			return err
		}
		if isDir {
			rules.load(p)
		}
		return nil
	})
}

// statDir resolves path (default ".") through the sandbox and reports
// whether it is a directory.
func statDir(env *Env, tool, path string) (abs string, isDir bool, err error) {
	if path == "" {
		path = "."
	}
	abs, err = ResolvePath(env, path, AccessRead)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", tool, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("%s: path %q does not exist", tool, path)
		}
		return "", false, fmt.Errorf("%s: %w", tool, err)
	}
	return abs, fi.IsDir(), nil
}

// ListFiles returns the regular files (and symlinks) of the workspace
// (env.Workdir, "" = the process's working directory) that the tools may
// see: the walk skips .git, entries ignored by the .gitignore files of the
// workspace and its subdirectories, and paths env.ReadPaths denies. Paths
// are relative to the workspace root, slash-separated and sorted; at most
// max are returned (max ≤ 0 = no cap) and total counts them all, so
// total > len(paths) means the list was cut. The walk stops with ctx's
// error when ctx is done. Safe for concurrent use.
func ListFiles(ctx context.Context, env *Env, max int) (paths []string, total int, err error) {
	root, err := workspaceRoot(env)
	if err != nil {
		return nil, 0, err
	}
	root = mustReal(root)
	err = walkTree(ctx, env, root, func(p string, d fs.DirEntry) error {
		if d.IsDir() {
			return nil
		}
		total++
		if rel, err := filepath.Rel(root, p); err == nil {
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list files of %s: %w", root, err)
	}
	sort.Strings(paths)
	if max > 0 && len(paths) > max {
		paths = paths[:max]
	}
	return paths, total, nil
}
