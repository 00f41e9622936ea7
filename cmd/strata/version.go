package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print strata's version: module version, VCS revision and time, Go version (as --version does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// versionLine describes this binary from its build information
// (runtime/debug.ReadBuildInfo): the main module's version ("(devel)" for a
// build inside the repository, vX.Y.Z for 'go install …@vX.Y.Z'), the VCS
// revision (12 hex digits), commit time and "modified" when the build
// stamped them (go build -buildvcs), then the Go version and platform, e.g.
//
//	strata v0.3.0 (commit 1a2b3c4d5e6f, 2026-11-23T10:00:00Z, modified) go1.26.8 linux/amd64
func versionLine() string {
	version, vcs := "unknown", []string(nil)
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			vcs = append(vcs, "commit "+rev[:min(12, len(rev))])
		}
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "modified")
		}
	}
	line := "strata " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return line + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
