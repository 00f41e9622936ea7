package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// Usage's JSON names are the design's (docs/turn.md, rule 4: "Fields:
// input, output, reasoning, cache_read, cache_write, total_tokens"), each
// present even at zero; a legacy "total" still reads.
func TestUsageJSONNamesAreTheDesigns(t *testing.T) {
	b, err := json.Marshal(llm.Usage{Input: 3, Output: 4, CacheRead: 1, CacheWrite: 2}.WithTotal())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"input":3,"output":4,"reasoning":0,"cache_read":1,"cache_write":2,"total_tokens":10}`; string(b) != want {
		t.Errorf("usage JSON %s, want %s", b, want)
	}
	var u llm.Usage
	if err := json.Unmarshal([]byte(`{"input":3,"output":4,"cache_read":1,"cache_write":2,"total":10}`), &u); err != nil || u.Total != 10 || u.Input != 3 {
		t.Errorf("legacy usage: %+v, %v", u, err)
	}
	if err := json.Unmarshal(b, &u); err != nil || u != (llm.Usage{Input: 3, Output: 4, CacheRead: 1, CacheWrite: 2, Total: 10}) {
		t.Errorf("round trip: %+v, %v", u, err)
	}
}
