package replay_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// TextDeltas repeats the text event n times for the APIs that stream text
// as separate events, and refuses what it cannot write with ErrInvalidReply.
func TestTextDeltas(t *testing.T) {
	for _, api := range []llm.API{llm.APIAnthropic, llm.APIOpenAIChat, llm.APIGemini} {
		r, err := replay.TextDeltas(api, 5, "piece-Zq9")
		if err != nil || strings.Count(string(r.Body), "piece-Zq9") != 5 {
			t.Errorf("%s: err %v, %d pieces", api, err, strings.Count(string(r.Body), "piece-Zq9"))
		}
	}
	for _, c := range []struct {
		api   llm.API
		n     int
		piece string
	}{
		{llm.APIOpenAIResponses, 2, "x-Zq9"}, {llm.APIBedrock, 2, "x-Zq9"}, {llm.APIAnthropic, 0, "x-Zq9"},
		{llm.APIAnthropic, 2, ""}, {llm.APIAnthropic, 2, `say "hi"`}, {llm.APIAnthropic, 2, "text"},
	} {
		if _, err := replay.TextDeltas(c.api, c.n, c.piece); !errors.Is(err, replay.ErrInvalidReply) {
			t.Errorf("TextDeltas(%s, %d, %q) = %v, want ErrInvalidReply", c.api, c.n, c.piece, err)
		}
	}
}
