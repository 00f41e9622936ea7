package replay

import (
	"bytes"
	"fmt"

	"github.com/strata-agent/strata/llm"
)

// TextDeltas authors a reply of one text block, piece repeated n times,
// streamed as n text deltas: n content_block_delta events on the Anthropic
// API, n chunks on Chat Completions and Gemini (each API joins them into
// one block). It is for tests of long answers (memory, throughput) that
// need many small deltas, which Turn does not write (it sends a block's
// text in one delta). The other APIs (Responses repeats the whole text in
// its final events; Bedrock's event stream is binary), n < 1, and a piece
// that is empty or holds a character JSON escapes ("\"", "\\", control
// characters, <, >, &) return an error wrapping ErrInvalidReply.
func TextDeltas(api llm.API, n int, piece string) (Response, error) {
	switch {
	case api != llm.APIAnthropic && api != llm.APIOpenAIChat && api != llm.APIGemini:
		return Response{}, fmt.Errorf("replay: TextDeltas: %w: api %q (want anthropic, openai-chat or gemini)", ErrInvalidReply, api)
	case n < 1:
		return Response{}, fmt.Errorf("replay: TextDeltas: %w: n = %d, want ≥ 1", ErrInvalidReply, n)
	}
	for _, c := range []byte(piece) {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return Response{}, fmt.Errorf("replay: TextDeltas: %w: piece %q holds %q, which JSON escapes", ErrInvalidReply, piece, c)
		}
	}
	if piece == "" {
		return Response{}, fmt.Errorf("replay: TextDeltas: %w: empty piece", ErrInvalidReply)
	}
	one, err := Text(api, piece)
	if err != nil {
		return Response{}, err
	}
	events := bytes.SplitAfter(one.Body, []byte("\n\n"))
	var out bytes.Buffer
	found := false
	for _, ev := range events {
		if !found && bytes.Contains(ev, []byte(piece)) {
			found = true
			out.Grow(len(one.Body) + (n-1)*len(ev))
			for range n {
				out.Write(ev)
			}
			continue
		}
		out.Write(ev)
	}
	if !found || bytes.Count(out.Bytes(), []byte(piece)) != n {
		return Response{}, fmt.Errorf("replay: TextDeltas: %w: %s: piece %q also appears elsewhere in the stream; choose a more distinctive piece", ErrInvalidReply, api, piece)
	}
	one.Body = out.Bytes()
	one.Source = fmt.Sprintf("replay.TextDeltas %s %d×%d bytes", api, n, len(piece))
	return one, nil
}
