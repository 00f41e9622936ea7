package trajectory

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: it returns a trajectory or an
// error naming the file, never panics; for a trajectory, every call's
// Request, Reply and RawRequest work and Observed sums them.
func FuzzParse(f *testing.F) {
	resp := `"extra":{"response":{"created":1,"provider":"p","model":"m","usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3}}}}`
	f.Add([]byte(`{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},` +
		`{"role":"assistant","content":"THOUGHT\n` + "```bash\\nls\\n```" + `",` + resp + `},{"role":"user","content":"<returncode>0</returncode>"}]}`))
	f.Add([]byte(`{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"system","content":"s"},{"role":"assistant","content":"x",` + resp + `}]}`))
	f.Add([]byte(`{"trajectory_format":"mini-swe-agent-1","messages":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse("fuzz.traj.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.traj.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i := range tr.Calls {
			if tr.Request(i) == nil || tr.RawRequest(i) == nil {
				t.Fatalf("call %d has no request", i)
			}
			_ = tr.Reply(i)
		}
		if tr.Request(len(tr.Calls)) != nil || tr.Request(-1) != nil {
			t.Fatal("an out-of-range call has a request")
		}
		_ = tr.Observed()
	})
}
