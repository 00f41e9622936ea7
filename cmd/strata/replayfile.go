package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/llm/replay"
)

// loadReplayFile loads a recorded response file for --replay: JSON-lines chunk
// files (*.chunks.txt) are re-framed as SSE (Bedrock lines as AWS event-stream
// messages); *.eventstream files are served as raw AWS event-stream bodies
// (Bedrock ConverseStream); any other file is served as raw SSE. The family
// is detected from the first data payload.
func loadReplayFile(path string) ([]replay.Response, replay.Family, error) {
	var rs []replay.Response
	if strings.HasSuffix(path, ".eventstream") {
		r, err := replay.EventStreamFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("--replay: %w", err)
		}
		return []replay.Response{r}, replay.FamilyBedrock, nil
	}
	if strings.HasSuffix(path, ".chunks.txt") {
		var err error
		if rs, err = replay.ChunksFile(path); err != nil {
			return nil, "", fmt.Errorf("--replay: %w", err)
		}
		if rs[0].Header.Get("Content-Type") == "application/vnd.amazon.eventstream" {
			return rs, replay.FamilyBedrock, nil
		}
	} else {
		r, err := replay.SSEFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("--replay: %w", err)
		}
		if !bytes.Contains(r.Body, []byte("data:")) {
			return nil, "", fmt.Errorf("--replay: %s is not an SSE stream (no data: lines); pass a raw SSE or *.chunks.txt file", path)
		}
		rs = []replay.Response{r}
	}
	sc := bufio.NewScanner(bytes.NewReader(rs[0].Body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if payload, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			fam, err := replay.DetectFamily(bytes.TrimSpace(payload))
			if err == nil {
				return rs, fam, nil
			}
		}
	}
	return rs, "", nil
}
