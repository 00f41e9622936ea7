package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-agent/strata/internal/jsonpos"
)

// SettingsFile is the name of the runtime settings file (docs/loop.md,
// "continuation limit"): the message-loop design's settings.json, read from
// ProjectSettingsDir under the workspace, then from the user's settings
// folder.
const SettingsFile = "settings.json"

// ProjectSettingsDir is the folder of a workspace that holds its
// SettingsFile.
const ProjectSettingsDir = ".strata"

// RuntimeSettings are the settings.json values strata reads. Every other key
// of the file is left alone (the file may carry other tools' settings).
type RuntimeSettings struct {
	// MaxIterations is runtime.continuation.maxIterations: the continuation
	// bound of a default-chat turn, in continuation rounds (0 = not set).
	MaxIterations int
	// Source names the file and JSON pointer MaxIterations came from
	// ("" when not set), for messages and `strata config`.
	Source string
}

// settingsJSON is the part of settings.json strata reads.
type settingsJSON struct {
	Runtime *struct {
		Continuation *struct {
			MaxIterations json.RawMessage `json:"maxIterations"`
		} `json:"continuation"`
	} `json:"runtime"`
}

// LoadRuntimeSettings resolves the runtime settings of a session in
// workspace dir: <dir>/.strata/settings.json, then userDir/settings.json
// (userDir is strata's user config folder, e.g. ~/.config/strata; "" =
// none); the first file that sets a value wins. Missing files are fine. A
// file that is not JSON, or a maxIterations that is not a whole number of
// at least 1, is an error naming the file, the JSON pointer and the value.
func LoadRuntimeSettings(dir, userDir string) (RuntimeSettings, error) {
	var files []string
	if dir != "" {
		files = append(files, filepath.Join(dir, ProjectSettingsDir, SettingsFile))
	}
	if userDir != "" {
		files = append(files, filepath.Join(userDir, SettingsFile))
	}
	for _, f := range files {
		s, err := readRuntimeSettings(f)
		if err != nil || s.MaxIterations != 0 {
			return s, err
		}
	}
	return RuntimeSettings{}, nil
}

// readRuntimeSettings reads one settings file; a missing one sets nothing.
func readRuntimeSettings(path string) (RuntimeSettings, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return RuntimeSettings{}, nil
	}
	if err != nil {
		return RuntimeSettings{}, fmt.Errorf("settings %s: %w", path, err)
	}
	var s settingsJSON
	if err := json.Unmarshal(raw, &s); err != nil {
		return RuntimeSettings{}, fmt.Errorf("settings %s: not valid JSON (want {\"runtime\":{\"continuation\":{\"maxIterations\":50}}}): %w", path, jsonpos.Wrap(raw, err))
	}
	if s.Runtime == nil || s.Runtime.Continuation == nil || s.Runtime.Continuation.MaxIterations == nil {
		return RuntimeSettings{}, nil
	}
	const ptr = "/runtime/continuation/maxIterations"
	v := s.Runtime.Continuation.MaxIterations
	var n int32
	if err := json.Unmarshal(v, &n); err != nil || n < 1 {
		return RuntimeSettings{}, fmt.Errorf("settings %s: %s: %s is not a whole number of continuation rounds of at least 1", path, ptr, v)
	}
	return RuntimeSettings{MaxIterations: int(n), Source: path + ":" + ptr}, nil
}

// UserDir is strata's folder in the user's config directory
// (os.UserConfigDir()/strata: $XDG_CONFIG_HOME/strata or ~/.config/strata on
// Linux), where the user's settings.json, config.yaml and the trust store
// live; "" when there is none (neither $XDG_CONFIG_HOME nor $HOME set).
func UserDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "strata")
}

// StrataPaths are strata's own configuration folder and file, which
// tool.Env.ConfigPaths protects from writes no person approved: UserDir
// (config.yaml, settings.json, trusted-workspaces.json; docs/config.md)
// and $STRATA_CONFIG when set.
func StrataPaths() []string {
	var out []string
	if d := UserDir(); d != "" {
		out = append(out, d)
	}
	if f := os.Getenv("STRATA_CONFIG"); f != "" {
		out = append(out, f)
	}
	return out
}
