package strata

// RenderLoopID is renderLoopID, for the render tests (package strata_test).
const RenderLoopID = renderLoopID
