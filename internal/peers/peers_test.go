package peers

import (
	"strings"
	"testing"
)

// The bundled node is Node 22 (acpx and the Inspector need ≥ 22.13), and it
// wins on PATH.
func TestBinHasNode22(t *testing.T) {
	out, err := Command(t, "node", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "v22.") {
		t.Fatalf("node --version = %q; want v22.x", v)
	}
	out, err = Command(t, "acpx", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0.15.1") {
		t.Fatalf("acpx --version: %v %q; want 0.15.1", err, out)
	}
}
