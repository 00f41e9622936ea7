package main

import (
	"github.com/strata-agent/strata/keepalive"
	"testing"

	"github.com/spf13/cobra"
)

// --keepalive takes auto or a count (0 = off) on chat, acp and worker; run has no
// pings; the config file's keepalive is checked the same way.
func TestKeepAliveFlag(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want keepalive.Options
	}{
		{"auto", keepalive.Options{On: true}}, // the library sends none unless asked
		{"0", keepalive.Options{Off: true}},
		{"3", keepalive.Options{MaxPings: 3}},
	} {
		var f runFlags
		cmd := &cobra.Command{Use: "chat"}
		addKeepAliveFlag(cmd, &f)
		if err := cmd.Flags().Set("keepalive", tt.arg); err != nil {
			t.Fatalf("--keepalive %s: %v", tt.arg, err)
		}
		if got := f.keepalive.options(); got != tt.want {
			t.Errorf("--keepalive %s: options %+v; want %+v", tt.arg, got, tt.want)
		}
	}
	for _, bad := range []string{"-1", "many", ""} {
		if err := checkKeepAlive(bad); err == nil {
			t.Errorf("keepalive %q was accepted", bad)
		}
	}
	if newRunCmd().Flags().Lookup("keepalive") != nil {
		t.Error("run has --keepalive; its process exits when the prompt ends")
	}
	if got := (runFlags{}).keepalive.options(); got != (keepalive.Options{Off: true}) {
		t.Errorf("run's keep-alive options %+v; want off", got)
	}
	for _, cmd := range []*cobra.Command{newChatCmd(), newACPCmd(), newWorkerCmd()} {
		if f := cmd.Flags().Lookup("keepalive"); f == nil || f.DefValue != "auto" {
			t.Errorf("%s does not default to --keepalive auto (a worker's durable sessions ping too: docs/durable.md)", cmd.Name())
		}
	}
}
