package strata

import (
	_ "embed"

	"github.com/strata-agent/strata/internal/wsrt"
)

// readme is strata's README, the documentation the introspect tool answers
// from.
//
//go:embed README.md
var readme string

func init() { wsrt.Readme = readme }
