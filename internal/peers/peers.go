// Package peers installs and locates the pinned third-party programs that
// strata's integration tests run as real peers (MCP servers, the MCP
// Inspector CLI, the acpx ACP client): ../shared/peers, installed with its
// install.sh into ${XDG_CACHE_HOME:-$HOME/.cache}/strata-peers (cached
// between runs; a matching stamp makes a re-run a no-op).
package peers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

var (
	once   sync.Once
	binDir string
	errMsg string
)

// Bin returns the peers' bin directory (it holds node 22 and every peer's
// executable), installing them on first use. When ../shared or npm is
// unavailable the test is skipped with the reason — or fails when CI=true,
// because CI always has both.
func Bin(t testing.TB) string {
	t.Helper()
	script := shared.Path(t, "peers/install.sh")
	once.Do(func() {
		if _, err := exec.LookPath("npm"); err != nil {
			errMsg = "npm not on PATH: cannot install the peers in ../shared/peers"
			return
		}
		var out, stderr bytes.Buffer
		cmd := exec.Command(script)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			errMsg = fmt.Sprintf("%s failed: %v\n%s", script, err, tail(stderr.String(), 2000))
			return
		}
		binDir = strings.TrimSpace(out.String())
		if _, err := os.Stat(filepath.Join(binDir, "node")); err != nil {
			errMsg = fmt.Sprintf("%s printed bin dir %q but it has no node: %v", script, binDir, err)
		}
	})
	if errMsg != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("peers: %s", errMsg)
		}
		t.Skipf("peers unavailable: %s", errMsg)
	}
	return binDir
}

// Command returns an exec.Cmd running the peer executable name from Bin with
// PATH set so the peers' "#!/usr/bin/env node" shebangs find the bundled
// Node 22 first.
func Command(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin := Bin(t)
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = Env(bin)
	return cmd
}

// Env returns the current environment with bin prepended to PATH.
func Env(bin string) []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
