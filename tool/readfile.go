package tool

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is matched (errors.Is) by ReadFileIn's error for a path
// that names something other than a regular file: a directory, a FIFO, a
// socket or a device, which could block or never end.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched (errors.Is) by ReadFileIn's error for a file over
// the size limit; nothing of it was read.
var ErrTooLarge = errors.New("file over the size limit")

// ReadFileIn is the one reader of files strata puts in a model's context
// without a tool call — AGENTS.md, CLAUDE.md, README.md, steering,
// skills, agent resources and prompt files, knowledge-base sources, the
// system reminder, the symbol map (docs/security.md, "Files read into
// context"). It applies the file tools' rule, then reads within bounds:
//
//   - ResolvePath(env, p, AccessRead): inside env.Workdir or a read
//     allowed path after following symlinks, not denied, not a regular
//     file with more than one hard link;
//   - the resolved path is opened without following a final symlink and
//     without blocking (a FIFO does not hang the open), then checked on the
//     open file: a regular file (else ErrNotRegular), still a single link,
//     at most max bytes (else ErrTooLarge, before anything is read);
//   - at most max bytes are read, even when the file grows meanwhile.
//
// max ≤ 0 means no size limit. Refusals match ErrSandbox, ErrNotRegular or
// ErrTooLarge; errors name the path.
func ReadFileIn(env *Env, p string, max int64) ([]byte, error) {
	real, err := ResolvePath(env, p, AccessRead)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(real, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read %s: %w (%s)", p, ErrNotRegular, fi.Mode().Type())
	case env.refusesLinks(fi):
		return nil, &SandboxError{Path: p, Resolved: real, Reason: fmt.Sprintf("(%s) is a file with %d hard links: its other names may lie outside the workspace", real, linkCount(fi))}
	case max > 0 && fi.Size() > max:
		return nil, fmt.Errorf("read %s: %w: %d bytes, over the limit of %d", p, ErrTooLarge, fi.Size(), max)
	}
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b, nil
}
