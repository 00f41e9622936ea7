package tool

import "io/fs"

// Access is what a tool does with a path: read it or write it. Each access
// has its own PathPolicy in Env (ReadPaths, WritePaths), so a directory
// allowed for reading never becomes writable.
type Access uint8

const (
	// AccessRead is a read: fs_read (every mode), grep, glob, and todo_list
	// loading and listing its lists. It is checked against Env.ReadPaths.
	AccessRead Access = iota
	// AccessWrite is a write: fs_write and todo_list saving a list. It is
	// checked against Env.WritePaths, and also refused where
	// ReadPaths.DeniedPaths deny (a write shows what it changes).
	AccessWrite
)

// String returns "read" or "write".
func (a Access) String() string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// PathPolicy is the path settings of one access, as kiro's toolsSettings
// give them for one tool (built-in-tools.md: fs_read's for reads, fs_write's
// for writes). Entries are paths or gitignore-style globs, absolute, "~/…"
// or relative to Env.Workdir; a plain path also covers everything below it.
// The zero value allows the workspace root and nothing else.
type PathPolicy struct {
	// AllowedPaths are extra roots (or globs) outside Workdir that paths of
	// this access may resolve into (kiro: allowedPaths, paths used without
	// prompting; a write they cover is pre-approved, PathPermission).
	// Anything else outside the workspace needs a person's approval of the
	// call (Env.PersonApproved) and is refused without one.
	AllowedPaths []string
	// DeniedPaths are paths or globs this access may not touch, even inside
	// Workdir (kiro: deniedPaths, evaluated before the allowed paths).
	// Listings (fs_read Directory, grep, glob, todo_list lookup) leave out
	// what ReadPaths.DeniedPaths cover, names and sizes included.
	DeniedPaths []string
}

// Policy returns the path policy of access: ReadPaths or WritePaths. A nil
// Env has empty policies (the workspace root only).
func (e *Env) Policy(access Access) PathPolicy {
	switch {
	case e == nil:
		return PathPolicy{}
	case access == AccessWrite:
		return e.WritePaths
	default:
		return e.ReadPaths
	}
}

// refusesLinks reports whether the hard-link rule refuses the file fi
// describes: a regular file with more than one link, unless AllowHardlinks.
func (e *Env) refusesLinks(fi fs.FileInfo) bool {
	return linkCount(fi) > 1 && (e == nil || !e.AllowHardlinks)
}

// linkCount returns the hard link count of a regular file's FileInfo (from
// os.Stat or os.Lstat), 0 for anything else or where the platform does not
// report it.
func linkCount(fi fs.FileInfo) uint64 {
	if !fi.Mode().IsRegular() {
		return 0
	}
	return sysLinkCount(fi)
}
