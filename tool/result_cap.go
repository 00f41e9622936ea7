package tool

import (
	"fmt"
	"unicode/utf8"

	"github.com/strata-agent/strata/llm"
)

// DefaultMaxResultBytes caps the text of one tool_result (bytes, all its
// text blocks together) when Env.MaxResultBytes is 0: 256 KiB, well above
// what the built-ins return (execute_bash keeps 30,000 bytes, fs_read
// 100,000 per operation) and a bound on what an MCP server can put in the
// conversation, where every later request carries it again.
const DefaultMaxResultBytes = 256 << 10

// capResult keeps the first limit bytes of content's text (limit ≤ 0: all
// of it), cut on a UTF-8 boundary, drops the text blocks past it and adds
// a text block saying how much was cut and which setting caps it. Other
// blocks (images) are kept.
func capResult(content []llm.Block, limit int) []llm.Block {
	total := 0
	for _, b := range content {
		if b.Type == llm.BlockText {
			total += len(b.Text)
		}
	}
	if limit <= 0 || total <= limit {
		return content
	}
	out := make([]llm.Block, 0, len(content)+1)
	room, kept := limit, 0
	for _, b := range content {
		if b.Type != llm.BlockText {
			out = append(out, b)
			continue
		}
		if len(b.Text) > room {
			cut := room
			for cut > 0 && !utf8.RuneStart(b.Text[cut]) {
				cut--
			}
			b.Text, room = b.Text[:cut], 0 // nothing after the cut is kept
		} else {
			room -= len(b.Text)
		}
		if b.Text != "" { // providers reject empty text blocks
			kept += len(b.Text)
			out = append(out, b)
		}
	}
	return append(out, llm.TextBlock(fmt.Sprintf("[tool result cut: the first %d of %d bytes are kept (tool results are capped at %d bytes: "+
		"Options.MaxToolResultBytes); ask for less, e.g. a line range, a narrower search or a filter]", kept, total, limit)))
}
