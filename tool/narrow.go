package tool

import "slices"

// Narrow returns the environment a sub-agent runs in: child (built from the
// sub-agent's own agent file) narrowed by parent (the environment of the
// agent that started it), so that the stricter rule always wins
// (docs/security.md, "Sub-agents"):
//
//   - the workspace root is the parent's;
//   - a path must pass both policies (Outer = parent): inside the
//     workspace or an allowed path of both, denied by neither;
//   - the deny lists of both are merged into the child's, so listings
//     (fs_read Directory, grep, glob) leave out what either denies;
//   - deniedCommands are merged: a command either refuses is refused;
//   - hard links are allowed only when both allow them.
//
// A nil parent returns child unchanged; child is not modified.
func Narrow(child, parent *Env) *Env {
	if parent == nil {
		return child
	}
	e := *child
	e.Workdir = parent.Workdir
	e.Outer = parent
	e.ReadPaths.DeniedPaths = merged(child.ReadPaths.DeniedPaths, parent.ReadPaths.DeniedPaths)
	e.WritePaths.DeniedPaths = merged(child.WritePaths.DeniedPaths, parent.WritePaths.DeniedPaths)
	e.DeniedCommands = merged(child.DeniedCommands, parent.DeniedCommands)
	e.AllowHardlinks = child.AllowHardlinks && parent.AllowHardlinks
	return &e
}

// merged returns a followed by the entries of b it lacks.
func merged(a, b []string) []string {
	out := slices.Clip(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
