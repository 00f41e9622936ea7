package trajectory

import (
	"errors"
	"testing"
)

func TestParseErrorsGiveFileLineColumn(t *testing.T) {
	head := "{\n  \"trajectory_format\": \"mini-swe-agent-1\",\n  \"messages\": [\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"syntax error", "{\n  \"messages\": [,]\n}", `trajectory: bad.traj.json:2:16: invalid character ',' looking for beginning of value`},
		{"truncated file", "{\n  \"messages\": [", `trajectory: bad.traj.json:2:16: unexpected end of JSON input`},
		{"missing field points at its message", head + "    {\"role\": \"system\", \"content\": \"s\"},\n    {\"role\": \"user\", \"content\": \"u\"},\n    {\"role\": \"assistant\", \"content\": \"a\"}\n  ]\n}",
			`trajectory: bad.traj.json:6:5: messages[2].extra.response: missing`},
		{"ill-typed field points into its message", head + "    {\"role\": \"system\", \"content\": 7}\n  ]\n}",
			`trajectory: bad.traj.json:4:35: messages[0]: json: cannot unmarshal number into Go struct field messageJSON.content of type string`},
		{"wrong format has no position", `{"trajectory_format": "x", "messages": []}`, `trajectory: bad.traj.json: trajectory_format: "x", want "mini-swe-agent-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.traj.json", []byte(tc.doc))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse error\n got: %v\nwant: %s", err, tc.want)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("errors.Is(%v, ErrMalformed) = false", err)
			}
		})
	}
}

func TestLoadOfMissingFileIsNotMalformed(t *testing.T) {
	_, err := Load("/nonexistent/x.traj.json")
	if err == nil || errors.Is(err, ErrMalformed) {
		t.Errorf("Load of a missing file: %v; want an error that is not ErrMalformed", err)
	}
}
