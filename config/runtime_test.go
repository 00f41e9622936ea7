package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/config"
)

// settings.json's runtime.continuation.maxIterations (docs/loop.md,
// "continuation limit"): the workspace's file beats the user's, a file
// without the key leaves the next one to decide, and a bad value is an
// error naming the file, the pointer and the value.
func TestRuntimeSettingsMaxIterations(t *testing.T) {
	write := func(dir, body string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, user := t.TempDir(), t.TempDir()
	if s, err := config.LoadRuntimeSettings(ws, user); err != nil || s.MaxIterations != 0 {
		t.Fatalf("no files: %+v, %v", s, err)
	}
	write(user, `{"runtime":{"continuation":{"maxIterations":7}}}`)
	if s, err := config.LoadRuntimeSettings(ws, user); err != nil || s.MaxIterations != 7 || !strings.Contains(s.Source, user) {
		t.Fatalf("user file: %+v, %v", s, err)
	}
	write(filepath.Join(ws, ".strata"), `{"theme":"dark","runtime":{"other":1}}`)
	if s, err := config.LoadRuntimeSettings(ws, user); err != nil || s.MaxIterations != 7 {
		t.Fatalf("workspace file without the key: %+v, %v", s, err)
	}
	write(filepath.Join(ws, ".strata"), `{"runtime":{"continuation":{"maxIterations":3}}}`)
	if s, err := config.LoadRuntimeSettings(ws, user); err != nil || s.MaxIterations != 3 || !strings.HasSuffix(s.Source, ".strata/settings.json:/runtime/continuation/maxIterations") {
		t.Fatalf("workspace file: %+v, %v", s, err)
	}
	for _, bad := range []string{`0`, `-2`, `2.5`, `"50"`, `true`, `99999999999`} {
		write(filepath.Join(ws, ".strata"), `{"runtime":{"continuation":{"maxIterations":`+bad+`}}}`)
		_, err := config.LoadRuntimeSettings(ws, user)
		if err == nil || !strings.Contains(err.Error(), "/runtime/continuation/maxIterations: "+bad) || !strings.Contains(err.Error(), filepath.Join(ws, ".strata", "settings.json")) {
			t.Errorf("maxIterations %s: %v", bad, err)
		}
	}
	write(filepath.Join(ws, ".strata"), `{"runtime":`)
	if _, err := config.LoadRuntimeSettings(ws, user); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken file: %v", err)
	}
}
