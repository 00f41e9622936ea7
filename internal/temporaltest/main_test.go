package temporaltest

import (
	"os"
	"testing"

	"github.com/strata-agent/strata/internal/strays"
)

// TestMain fails the run when the tests leave files in this directory.
func TestMain(m *testing.M) { os.Exit(strays.Run(m)) }
