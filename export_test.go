package strata

// The runtime's internals its external tests (package strata_test) check.
var (
	FileTree = fileTree
)

// RenderLoopID is renderLoopID, for the render tests.
const RenderLoopID = renderLoopID
