package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
)

// FuzzHookOutput runs a real hook that prints arbitrary bytes on stdout and
// stderr and exits with an arbitrary code, under an arbitrary output cap,
// and checks what strata makes of it: an agentSpawn hook's output is its
// stdout, trimmed, cut at the cap with a note, and only when it exited 0; a
// preToolUse hook denies exactly when it exits 2, always with a reason. No
// input panics.
func FuzzHookOutput(f *testing.F) {
	f.Add([]byte("branch: main\n"), []byte(""), uint8(0), uint16(0))
	f.Add([]byte(""), []byte("reading secrets is not allowed\n"), uint8(2), uint16(0))
	f.Add([]byte("\xff\xfe partial \xe2\x82"), []byte("\x00\x00"), uint8(2), uint16(3))
	f.Add([]byte(strings.Repeat("x", 5000)), []byte(strings.Repeat("y", 100)), uint8(1), uint16(64))
	f.Add([]byte("  \n\t "), []byte("   "), uint8(2), uint16(1))
	f.Fuzz(func(t *testing.T, stdout, stderr []byte, code uint8, limit uint16) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "out"), stdout, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "err"), stderr, 0o644); err != nil {
			t.Fatal(err)
		}
		h := config.Hook{Command: "cat out; cat err >&2; exit " + strconv.Itoa(int(code))}
		capBytes := DefaultMaxOutput
		if limit > 0 {
			l := int64(limit)
			h.MaxOutputSize, capBytes = &l, int(limit)
		}
		a := &config.Agent{Hooks: config.Hooks{"agentSpawn": {h}, "preToolUse": {h}}}
		r := New(a, Options{Cwd: dir, Warn: func(string) {}})

		outs := r.AgentSpawn(context.Background())
		want := ""
		if code == 0 {
			kept := stdout
			note := ""
			if len(kept) > capBytes {
				kept, note = kept[:capBytes], "\n[output truncated at "+strconv.Itoa(capBytes)+" bytes]"
			}
			want = strings.TrimSpace(string(kept) + note)
		}
		got := strings.Join(outs, "")
		if got != want || len(outs) > 1 {
			t.Fatalf("agentSpawn output %q (%d parts), want %q", got, len(outs), want)
		}

		v := r.preToolUse(context.Background(), llm.ToolUseBlock("t", "fs_read", json.RawMessage(`{}`)))
		if v.Deny != (code == 2) {
			t.Fatalf("exit %d: deny = %v", code, v.Deny)
		}
		if v.Deny && strings.TrimSpace(v.Reason) == "" {
			t.Fatal("a denial without a reason")
		}
	})
}
