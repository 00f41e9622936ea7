package main

import (
	"fmt"
	"github.com/strata-agent/strata/keepalive"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
)

// keepAliveFlag is --keepalive of chat and acp: "auto" (the default: the
// provider's ski-rental bound, docs/keepalive.md) or the most keep-alive
// pings per idle stretch, 0 turning them off.
type keepAliveFlag struct {
	auto bool
	n    int
}

func (k *keepAliveFlag) String() string {
	if k == nil || k.auto {
		return "auto"
	}
	return strconv.Itoa(k.n)
}

func (k *keepAliveFlag) Set(s string) error {
	if s == "auto" {
		k.auto, k.n = true, 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want auto or a number of pings ≥ 0 (0 = off), got %q", s)
	}
	k.auto, k.n = false, n
	return nil
}

func (k *keepAliveFlag) Type() string { return "N|auto" }

// checkKeepAlive validates the config file's keepalive value.
func checkKeepAlive(s string) error { return new(keepAliveFlag).Set(s) }

// addKeepAliveFlag adds --keepalive to an interactive command (chat, acp)
// and to `worker`, whose durable sessions ping from the workflow: their
// sessions idle between prompts. One-shot `run` has no pings: its process
// exits when the prompt ends.
func addKeepAliveFlag(cmd *cobra.Command, f *runFlags) {
	f.keepalive = &keepAliveFlag{auto: true}
	cmd.Flags().Var(f.keepalive, "keepalive",
		"keep-alive pings per idle stretch: re-send the last request with max_tokens 1 before the prompt cache expires "+
			"(auto = the ski-rental bound of the request and price, at most 11 on Anthropic/Bedrock, none on OpenAI/Gemini; cachefit only; 0 = off; docs/keepalive.md)")
}

// options is the keepalive.Options of the flag; a command without the flag
// (nil) sends no pings.
func (k *keepAliveFlag) options() keepalive.Options {
	switch {
	case k == nil || (!k.auto && k.n == 0):
		return keepalive.Options{Off: true}
	case k.auto:
		return keepalive.Options{On: true} // the library's zero value sends none

	}
	return keepalive.Options{MaxPings: k.n}
}

// keepAliveLine describes the keep-alive pings of s for /usage ("" when it
// sent none).
func keepAliveLine(s *strata.Session) string {
	st := s.KeepAlive()
	if st.Pings == 0 {
		return ""
	}
	return fmt.Sprintf("keep-alive: %d ping(s) · tokens: input %d, output %d, cache read %d, cache write %d (included above)",
		st.Pings, st.Usage.Input, st.Usage.Output, st.Usage.CacheRead, st.Usage.CacheWrite)
}

// withKeepAlive returns u plus the usage of s's keep-alive pings.
func withKeepAlive(s *strata.Session, u llm.Usage) llm.Usage { return u.Add(s.KeepAlive().Usage) }
