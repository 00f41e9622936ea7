package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrSandbox is matched (errors.Is) by every error ResolvePath returns for a
// path the sandbox refuses, as opposed to an I/O error while resolving it.
var ErrSandbox = errors.New("path refused by the workspace sandbox")

// SandboxError describes a path ResolvePath refused. errors.Is(err,
// ErrSandbox) holds for it.
type SandboxError struct {
	Path     string // the path as the tool received it
	Resolved string // the absolute path it names, after following symlinks
	Root     string // the workspace root (Env.Workdir, resolved)
	// Reason completes the sentence "path P …", e.g. "resolves to /x,
	// outside the workspace root /ws".
	Reason string
}

// Error returns `path "P" <Reason>`.
func (e *SandboxError) Error() string { return fmt.Sprintf("path %q %s", e.Path, e.Reason) }

// Is reports whether target is ErrSandbox.
func (e *SandboxError) Is(target error) bool { return target == ErrSandbox }

// maxSymlinkHops bounds symlink resolution (Linux uses 40).
const maxSymlinkHops = 40

// maxPathBytes is Linux's PATH_MAX (bytes, with the final NUL): no system
// call takes a longer path, and refusing one early bounds the cost of
// matching it against the policies.
const maxPathBytes = 4096

// ResolvePath applies the workspace sandbox to p for one kind of access and
// returns the absolute, symlink-free path it names.
//
//   - "~" and "~/…" expand to the home directory; other relative paths
//     resolve against env.Workdir (the process's working directory when
//     empty); the result is cleaned first, so "a/../b" is "b" even when a
//     is a symlink (".." is lexical, as in filepath.Clean and a shell's cd).
//   - Symlinks are then followed component by component, on the longest
//     existing prefix, so a path to a file not yet created works and a
//     dangling symlink is followed to where it points.
//   - The resolved path must lie inside the resolved Workdir or one of the
//     access's allowed paths (Env.Policy: ReadPaths for AccessRead,
//     WritePaths for AccessWrite; an entry is a directory or a glob, and a
//     plain path covers everything below it). "../x", an absolute path
//     elsewhere, or a symlink pointing out are refused, unless a person
//     approved the call (Env.PersonApproved for Env.CallID).
//   - It must match none of the access's denied paths (kiro's
//     gitignore-like globs: a pattern without "/" matches a name at any
//     depth; a match covers everything below it). A write is also refused
//     where ReadPaths denies: fs_write's result shows the file it edits. An
//     invalid denied pattern refuses every path (fail closed).
//   - A write to agent configuration (ConfigPath, Env.ConfigPaths) is
//     refused unless a person approved the call or an fs_write allowedPaths
//     entry names agent configuration covering it (docs/security.md,
//     "Agent configuration files").
//   - A path of PATH_MAX (4096) bytes or more, once absolute and clean, is
//     refused, as the kernel would.
//   - An existing regular file with more than one hard link is refused
//     unless Env.AllowHardlinks (Unix; see the package doc, "Hard links").
//
// Refusals are *SandboxError (errors.Is(err, ErrSandbox)) whose message names
// the path, the root and the setting that refused it; I/O errors while
// resolving (permission denied, a file used as a directory, a symlink loop)
// are returned wrapped. ResolvePath checks the file system as it is when
// called; see the package doc for what a concurrent process can still do.
func ResolvePath(env *Env, p string, access Access) (string, error) {
	r, err := resolve(env, p)
	if err != nil {
		return "", err
	}
	root, abs, real, realRoot := r.root, r.abs, r.real, r.realRoot
	refuse := func(reason string) error {
		return &SandboxError{Path: p, Resolved: real, Root: realRoot, Reason: reason}
	}
	if r.outside(env, access) && !env.personApproved() {
		reason := fmt.Sprintf("resolves to %s, outside the workspace root %s", real, realRoot)
		if within(root, abs) || within(realRoot, abs) {
			reason = fmt.Sprintf("resolves through a symlink to %s, outside the workspace root %s", real, realRoot)
		}
		if allowed := env.Policy(access).AllowedPaths; len(allowed) > 0 {
			reason += fmt.Sprintf(" and the %s policy's allowed paths %q", access, allowed)
		}
		if access == AccessWrite && allowedBy(env.Policy(AccessRead).AllowedPaths, root, real) {
			reason += " (the read policy's allowedPaths make it readable, not writable)"
		}
		return "", refuse(reason + "; a path outside them needs a person's approval of the call")
	}
	pat, from, err := compileDenied(env, root, access).match(abs, real)
	if err != nil {
		return "", refuse("cannot be checked: " + err.Error())
	}
	if pat != "" {
		return "", refuse(fmt.Sprintf("(%s) is denied by the deniedPaths pattern %q of the %s policy (workspace root %s)", real, pat, from, realRoot))
	}
	if access == AccessWrite {
		if gitDir := gitPath(abs, real); gitDir != "" && !gitWriteAllowed(env.WritePaths.AllowedPaths, root, real) {
			return "", refuse(fmt.Sprintf("(%s) is inside the git directory %s: git runs the commands that .git/config and .git/hooks name "+
				"(core.fsmonitor, core.hooksPath, hooks), so even an allow-listed `git status` would run what a write planted there; "+
				"writes at or under a .git are refused unless an fs_write allowedPaths entry names a path inside .git", real, gitDir))
		}
		if env.protectedWrite(r) && !env.personApproved() {
			return "", refuse(fmt.Sprintf("(%s) is %s: writing it needs a person's approval of this call "+
				"(allowedTools and allowedPaths do not cover it unless an fs_write allowedPaths entry names it)", real, env.configKind(r)))
		}
	}
	if fi, err := os.Lstat(real); err == nil && env.refusesLinks(fi) {
		return "", refuse(fmt.Sprintf("(%s) is a file with %d hard links: its other names may lie outside the workspace, "+
			"so tools refuse hard-linked files; replace it with a copy of its own (cp, then mv over it) to use it", real, linkCount(fi)))
	}
	if env.Outer != nil { // a sub-agent: its parent's policy applies too (Narrow)
		if _, err := ResolvePath(env.Outer, p, access); err != nil {
			return "", fmt.Errorf("%w (the policy of the agent that started this sub-agent)", err)
		}
	}
	return real, nil
}

// resolvedPath is one path as ResolvePath sees it before its policy checks.
type resolvedPath struct {
	root, realRoot string // the workspace root, as given (absolute) and resolved
	abs, real      string // the path, absolute and clean, and resolved
}

// resolve makes p absolute and follows its symlinks (ResolvePath's first
// steps); an empty path, a NUL byte or a path over PATH_MAX is a
// *SandboxError, a resolution failure an I/O error.
func resolve(env *Env, p string) (resolvedPath, error) {
	root, err := workspaceRoot(env)
	if err != nil {
		return resolvedPath{}, err
	}
	if p == "" {
		return resolvedPath{}, &SandboxError{Path: p, Root: root, Reason: "is empty (workspace root " + root + ")"}
	}
	if strings.ContainsRune(p, 0) {
		return resolvedPath{}, &SandboxError{Path: p, Root: root, Reason: "contains a NUL byte"}
	}
	abs, err := absPath(root, p)
	if err != nil {
		return resolvedPath{}, fmt.Errorf("path %q: %w", p, err)
	}
	if len(abs) >= maxPathBytes {
		return resolvedPath{}, &SandboxError{Path: clip(p, 200), Root: root,
			Reason: fmt.Sprintf("is %d bytes long once made absolute, over the %d-byte limit of a path (PATH_MAX)", len(abs), maxPathBytes)}
	}
	real, err := resolveReal(abs)
	if err != nil {
		return resolvedPath{}, fmt.Errorf("path %q: %w", p, err)
	}
	realRoot, err := resolveReal(root)
	if err != nil {
		return resolvedPath{}, fmt.Errorf("workspace root %s: %w", root, err)
	}
	return resolvedPath{root: root, realRoot: realRoot, abs: abs, real: real}, nil
}

// outside reports whether r lies outside the workspace and the access's
// allowed paths.
func (r resolvedPath) outside(env *Env, access Access) bool {
	return !within(r.realRoot, r.real) && !allowedBy(env.Policy(access).AllowedPaths, r.root, r.real)
}

// personApproved reports whether a person approved the call env runs
// (Env.PersonApproved for Env.CallID).
func (e *Env) personApproved() bool {
	return e != nil && e.PersonApproved != nil && e.CallID != "" && e.PersonApproved(e.CallID)
}

// workspaceRoot returns env.Workdir made absolute and clean, or the process's
// working directory when it is empty.
func workspaceRoot(env *Env) (string, error) {
	wd := ""
	if env != nil {
		wd = env.Workdir
	}
	if wd == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no workspace: Env.Workdir is empty and the working directory is unknown: %w", err)
		}
		wd = d
	}
	abs, err := filepath.Abs(wd)
	if err != nil {
		return "", fmt.Errorf("workspace root %s: %w", wd, err)
	}
	return abs, nil
}

// absPath expands "~" and makes p absolute against root, cleaned.
func absPath(root, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p), nil
}

// resolveReal follows symlinks in the absolute path p one component at a
// time, like filepath.EvalSymlinks, but tolerates a missing tail: from the
// first component that does not exist on, the rest is appended as is. A
// dangling symlink is followed to its target.
func resolveReal(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	rest := splitPath(p[len(vol):])
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Clean(filepath.Join(append([]string{next}, rest...)...)), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved = v + string(filepath.Separator)
			target = target[len(v):]
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// within reports whether p is root or lies below it (both absolute, clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// allowedBy reports whether the resolved path real falls under one of the
// allowed entries. Each entry's non-glob base is resolved too, so entries
// that are (or go through) symlinks work.
func allowedBy(allowed []string, root, real string) bool {
	for _, entry := range allowed {
		for _, pat := range patternForms(root, entry, false) {
			if ok, _ := matchCovers(pat, real); ok {
				return true
			}
		}
	}
	return false
}

// denyList is the denied paths of one access compiled against a workspace
// root.
type denyList struct {
	pats  []string   // the settings as given
	from  []Access   // the policy each setting comes from
	forms [][]string // absolute doublestar patterns per setting
	bad   error      // the first invalid pattern, which denies everything
	badAt string
}

// compileDenied compiles the denied paths of access for root: ReadPaths'
// for a read; WritePaths' then ReadPaths' for a write.
func compileDenied(env *Env, root string, access Access) *denyList {
	d := &denyList{}
	policies := []Access{AccessRead}
	if access == AccessWrite {
		policies = []Access{AccessWrite, AccessRead}
	}
	for _, a := range policies {
		for _, pat := range env.Policy(a).DeniedPaths {
			if !doublestar.ValidatePattern(filepath.ToSlash(pat)) && d.bad == nil {
				d.bad, d.badAt = doublestar.ErrBadPattern, pat
			}
			d.pats = append(d.pats, pat)
			d.from = append(d.from, a)
			d.forms = append(d.forms, patternForms(root, pat, true))
		}
	}
	return d
}

// match returns the setting that covers one of paths and the policy it
// comes from, or an error when a setting is invalid (fail closed).
func (d *denyList) match(paths ...string) (string, Access, error) {
	if d.bad != nil {
		return d.badAt, 0, fmt.Errorf("deniedPaths pattern %q is invalid: %w", d.badAt, d.bad)
	}
	for i, forms := range d.forms {
		for _, form := range forms {
			for _, p := range paths {
				if ok, err := matchCovers(form, p); err != nil {
					return d.pats[i], d.from[i], fmt.Errorf("deniedPaths pattern %q: %w", d.pats[i], err)
				} else if ok {
					return d.pats[i], d.from[i], nil
				}
			}
		}
	}
	return "", 0, nil
}

// denies reports whether p is denied (or cannot be checked).
func (d *denyList) denies(p string) bool {
	pat, _, err := d.match(p)
	return pat != "" || err != nil
}

// readDenyList compiles the read policy's denied paths against the
// workspace root: what every listing (fs_read Directory, grep, glob,
// todo_list lookup) leaves out.
func readDenyList(env *Env) (*denyList, error) {
	ws, err := workspaceRoot(env)
	if err != nil {
		return nil, err
	}
	return compileDenied(env, ws, AccessRead), nil
}

// patternForms turns a kiro path setting into absolute doublestar patterns:
// "~" expanded, relative entries joined to root, and each form also with its
// non-glob base resolved through symlinks. With anyDepth, a pattern without
// "/" (gitignore style, e.g. "*.pem" or ".env") matches that name anywhere.
func patternForms(root, entry string, anyDepth bool) []string {
	entry = strings.TrimSuffix(filepath.ToSlash(entry), "/")
	if entry == "" {
		return nil
	}
	if anyDepth && !strings.Contains(entry, "/") && entry != "~" {
		return []string{"/**/" + entry}
	}
	abs, err := absPath(root, filepath.FromSlash(entry))
	if err != nil {
		return nil
	}
	abs = filepath.ToSlash(abs)
	forms := []string{abs}
	base, rest := doublestar.SplitPattern(abs)
	if realBase, err := resolveReal(filepath.FromSlash(base)); err == nil {
		realBase = filepath.ToSlash(realBase)
		if rest == "" || base == abs {
			forms = append(forms, realBase)
		} else {
			forms = append(forms, strings.TrimSuffix(realBase, "/")+"/"+rest)
		}
	}
	return forms
}

// matchCovers reports whether the absolute pattern matches p or one of its
// parent directories (kiro: "~/temp" also matches "~/temp/child").
func matchCovers(pattern, p string) (bool, error) {
	p = filepath.ToSlash(p)
	for {
		ok, err := doublestar.Match(pattern, p)
		if err != nil || ok {
			return ok, err
		}
		parent := filepath.ToSlash(filepath.Dir(p))
		if parent == p {
			return false, nil
		}
		p = parent
	}
}

// displayPath returns p (absolute) relative to the workspace root when it
// lies inside it, with forward slashes, else p unchanged.
func displayPath(env *Env, p string) string {
	root, err := workspaceRoot(env)
	if err != nil {
		return p
	}
	for _, r := range []string{root, mustReal(root)} {
		if within(r, p) {
			rel, _ := filepath.Rel(r, p)
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// mustReal returns resolveReal(p), or p when it fails.
func mustReal(p string) string {
	if r, err := resolveReal(p); err == nil {
		return r
	}
	return p
}

// gitPath returns the part of abs or real (lexical and resolved forms of one
// path) up to its first component named ".git" (compared case-insensitively,
// as macOS and Windows file systems do), or "" when neither has one.
func gitPath(abs, real string) string {
	for _, p := range []string{abs, real} {
		parts := splitPath(p)
		for i, c := range parts {
			if strings.EqualFold(c, ".git") {
				return filepath.FromSlash(strings.Join(parts[:i+1], "/"))
			}
		}
	}
	return ""
}

// gitWriteAllowed reports whether an allowed entry that names a path inside
// a .git (".git/hooks", "sub/.git/info/exclude") covers real: only such an
// explicit entry opens .git to writes, not one that covers it by accident
// ("~", "..", "/").
func gitWriteAllowed(allowed []string, root, real string) bool {
	var explicit []string
	for _, e := range allowed {
		if gitPath(filepath.ToSlash(e), "") != "" {
			explicit = append(explicit, e)
		}
	}
	return allowedBy(explicit, root, real)
}
