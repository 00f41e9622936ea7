package durable

import (
	"flag"
	"os"
	"testing"

	"github.com/strata-agent/strata/internal/strays"
)

// TestMain fails the run when the tests leave files in this directory or
// processes behind (internal/strays). With -record the recorded histories
// are meant to land in testdata.
func TestMain(m *testing.M) {
	flag.Parse()
	if *record {
		os.Exit(m.Run())
	}
	os.Exit(strays.Run(m))
}
