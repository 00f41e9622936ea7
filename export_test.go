package strata

// The runtime's internals its external tests (package strata_test) check.
var (
	FileTree         = fileTree
	ModelForProvider = modelForProvider
)

// RenderLoopID is renderLoopID, for the render tests.
const RenderLoopID = renderLoopID
