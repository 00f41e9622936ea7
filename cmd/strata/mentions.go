package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// mentionBytes caps a file attached by an @path mention (bytes); a larger
// file is not attached and the chat says so (fs_read can still read it).
const mentionBytes = 256 << 10

// mentionRE finds "@path" words: at the start or after white space.
var mentionRE = regexp.MustCompile(`(?:^|\s)@([^\s@]+)`)

// promptWithMentions runs text as a prompt of s with every file its
// "@path" words name attached as a text block (docs/cli.md, "chat"):
// paths resolve against the workspace with fs_read's path rules
// (tool.ResolvePath, AccessRead), so a mention reads nothing fs_read could
// not. A mention that is not a readable text file is left as text and say
// tells why.
func promptWithMentions(ctx context.Context, s *strata.Session, say func(string), text string) (*agent.Result, error) {
	atts, notes := mentions(s.Workspace().ToolEnv(), text)
	for _, n := range notes {
		say(n)
	}
	return s.Prompt(ctx, text, atts...)
}

// mentions reads the files text mentions; notes say which were attached
// and why others were not.
func mentions(env *tool.Env, text string) (atts []llm.Block, notes []string) {
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".,;:!?)")
		if seen[p] {
			continue
		}
		seen[p] = true
		abs, err := tool.ResolvePath(env, p, tool.AccessRead)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s: not attached: %v", p, err))
			continue
		}
		fi, err := os.Stat(abs)
		switch {
		case err != nil && !strings.ContainsAny(p, "./"):
			continue // "@param", "@alice": a word, not a path
		case err != nil:
			notes = append(notes, fmt.Sprintf("@%s: not attached: %v", p, err))
			continue
		case fi.IsDir():
			notes = append(notes, fmt.Sprintf("@%s: not attached: a directory (mention its files)", p))
			continue
		case fi.Size() > mentionBytes:
			notes = append(notes, fmt.Sprintf("@%s: not attached: %d bytes, over the %d-byte limit for mentions (ask the model to read it)", p, fi.Size(), mentionBytes))
			continue
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s: not attached: %v", p, err))
			continue
		}
		atts = append(atts, llm.TextBlock(fmt.Sprintf("<file path=%q>\n%s\n</file>", p, strings.TrimRight(string(b), "\n"))))
		notes = append(notes, fmt.Sprintf("@%s: attached (%d bytes)", p, len(b)))
	}
	return atts, notes
}

// completePath lists the workspace paths that start with prefix and that
// fs_read's path rules let the model read (for "@path" completion):
// directories end with "/", hidden entries only when prefix names them, at
// most 50, sorted.
func completePath(env *tool.Env, prefix string) []string {
	dir, base := filepath.Split(prefix)
	entries, err := os.ReadDir(filepath.Join(env.Workdir, dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		rel := dir + name
		if _, err := tool.ResolvePath(env, rel, tool.AccessRead); err != nil {
			continue
		}
		if e.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		if len(out) == 50 {
			break
		}
	}
	sort.Strings(out)
	return out
}
