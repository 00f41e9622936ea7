package strata

import "github.com/strata-agent/strata/internal/wsrt"

// RenderLoopID is the loop id Render gives a new conversation, for the
// render tests (package strata_test).
const RenderLoopID = wsrt.RenderLoopID
