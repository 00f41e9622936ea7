package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Preview shows the diff Run would make without writing (the chat shows
// it before the approval: docs/chat.md, "Approvals"), whole even past
// MaxDiffBytes, and refuses what Run refuses, with Run's error.
func TestFSWritePreviewWritesNothing(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "a.txt")
	old := "one\n" + strings.Repeat("filler line\n", 40) + "two\n"
	os.WriteFile(p, []byte(old), 0o644)
	env := &Env{Workdir: ws}
	w := &FSWrite{MaxDiffBytes: 50}
	in, _ := json.Marshal(map[string]any{"command": "create", "path": "a.txt", "file_text": "ONE\n" + strings.Repeat("filler line\n", 40) + "TWO\n"})
	d, err := w.Preview(context.Background(), env, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- a/a.txt", "+++ b/a.txt", "-one", "+ONE", "-two", "+TWO"} {
		if !strings.Contains(d, want) {
			t.Errorf("preview lacks %q:\n%s", want, d)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != old {
		t.Error("Preview wrote the file")
	}
	for _, bad := range []string{`{"command":"str_replace","path":"a.txt","old_str":"nope","new_str":"x"}`, `{"command":"create","path":"../out.txt","file_text":"x"}`} {
		_, perr := w.Preview(context.Background(), env, json.RawMessage(bad))
		_, rerr := w.Run(context.Background(), env, json.RawMessage(bad))
		if perr == nil || rerr == nil || perr.Error() != rerr.Error() {
			t.Errorf("%s: Preview %v, Run %v; want the same error", bad, perr, rerr)
		}
	}
}
