// Package demo holds the offline demo session that `strata run` plays when no
// API key is set: three recorded Anthropic Messages streams, authored for
// strata (not captured from a model), in which the "model" lists the working
// directory with glob, reads README.md with fs_read, and answers. The tool
// calls in it are executed for real by the loop; only the model's words are
// recorded. The files are embedded so an installed binary works anywhere.
package demo

import (
	"embed"
	"fmt"
	"net/http"

	"github.com/strata-agent/strata/llm/replay"
)

//go:embed turn*.sse
var files embed.FS

// Model is the model name the demo streams report.
const Model = "strata-demo-replay"

// Script returns the demo's responses in the order the loop requests them.
func Script() ([]replay.Response, error) {
	var out []replay.Response
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("turn%d.sse", i)
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		out = append(out, replay.Response{Body: b, Source: "demo/" + name,
			Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}})
	}
	return out, nil
}
