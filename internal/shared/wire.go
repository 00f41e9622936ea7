package shared

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WireRow is one row of the per-file table of data/wire/INDEX.md.
type WireRow struct {
	Path      string // relative to data/wire
	API       string // e.g. "Anthropic Messages", "Bedrock ConverseStream"
	Format    string // e.g. "raw SSE", "JSON-lines (parsed chunks)", "HTTP cassette …"
	Exercises string // the features the file exercises
	Notes     string
}

// WireIndex returns the data/wire directory and the INDEX.md file rows for
// which keep returns true (summary-table rows are left out). It skips or
// fails like Path when the shared folder is absent.
func WireIndex(t testing.TB, keep func(WireRow) bool) (string, []WireRow) {
	t.Helper()
	wire := Path(t, "data/wire")
	f, err := os.Open(filepath.Join(wire, "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []WireRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), " | ")
		if len(cols) < 3 || !strings.HasPrefix(cols[0], "| ") {
			continue
		}
		r := WireRow{Path: strings.TrimPrefix(cols[0], "| "), API: cols[1], Format: cols[2]}
		if len(cols) > 3 {
			r.Exercises = cols[3]
		}
		if len(cols) > 4 {
			r.Notes = strings.TrimSuffix(strings.Join(cols[4:], " | "), " |")
		}
		if strings.Contains(r.Path, "/") && keep(r) {
			rows = append(rows, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return wire, rows
}
