package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// bigTool returns n bytes of text in two blocks around an image, like an
// MCP server answering with far more than a conversation should carry.
type bigTool struct{ n int }

func (b bigTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "big", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (b bigTool) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	half := strings.Repeat("é", b.n/4) // 2 bytes each: cuts must respect UTF-8
	return Result{Content: []llm.Block{llm.TextBlock(half), {Type: llm.BlockImage, MediaType: "image/png", Data: []byte("png")}, llm.TextBlock(half)}}, nil
}

// Every tool_result's text is capped, with a note naming the sizes and the
// setting; images stay; a negative cap turns it off; small results are
// untouched.
func TestAttackHugeToolResultIsCapped(t *testing.T) {
	r := NewRegistry(bigTool{n: 8 << 20})
	for _, c := range []struct {
		name  string
		limit int
		want  int // text bytes kept, before the note
	}{
		{"default", 0, DefaultMaxResultBytes},
		{"set", 1001, 1000}, // 1001 falls inside a 2-byte rune
		{"off", -1, 8 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := r.Execute(context.Background(), &Env{Workdir: t.TempDir(), MaxResultBytes: c.limit}, llm.ToolUseBlock("t1", "big", json.RawMessage(`{}`)))
			kept, images, note := 0, 0, ""
			for _, x := range b.Content {
				switch {
				case x.Type == llm.BlockImage:
					images++
				case strings.HasPrefix(x.Text, "[tool result cut"):
					note = x.Text
				default:
					kept += len(x.Text)
					if !utf8Valid(x.Text) {
						t.Error("a cut split a UTF-8 sequence")
					}
				}
			}
			if kept != c.want || images != 1 {
				t.Errorf("kept %d text bytes and %d images; want %d and 1", kept, images, c.want)
			}
			if c.limit >= 0 && (!strings.Contains(note, "8388608 bytes") || !strings.Contains(note, "MaxToolResultBytes")) {
				t.Errorf("note %q", note)
			}
			if c.limit < 0 && note != "" {
				t.Errorf("uncapped result has a note %q", note)
			}
		})
	}
	small := NewRegistry(bigTool{n: 400}).Execute(context.Background(), &Env{Workdir: t.TempDir()}, llm.ToolUseBlock("t2", "big", json.RawMessage(`{}`)))
	if len(small.Content) != 3 {
		t.Errorf("a small result was changed: %d blocks", len(small.Content))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
