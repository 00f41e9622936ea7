package benchcache

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
)

// chromium is Debian's chromium; .ci/run installs it.
const chromium = "/usr/bin/chromium"

// chromiumFlags keep a headless run local: no network services, no sync, a
// fresh profile per run.
func chromiumFlags(t *testing.T) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found: CI installs Debian's chromium (.ci/run)", chromium)
		}
		t.Skipf("%s not found (apt-get install -y chromium): the report is not checked in a browser", chromium)
	}
}

var checkResult = regexp.MustCompile(`<pre id="layout-check">(.*?)</pre>`)

// browserCheck renders the report page in headless chromium at 1280 px with
// testdata/layoutcheck.js added, and returns the SVG count and the problems
// the script found: a text label outside its SVG (clipped) or overlapping
// another label, a line that is empty or outside its chart, two lines of one
// chart with the same points (one hides the other).
func browserCheck(t *testing.T, page []byte) (int, []string) {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile("testdata/layoutcheck.js")
	if err != nil {
		t.Fatal(err)
	}
	page = bytes.Replace(page, []byte("</body>"), []byte("<script>"+string(script)+"</script></body>"), 1)
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(chromiumFlags(t), "--window-size=1280,2000", "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	out, err := exec.CommandContext(ctx, chromium, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := checkResult.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the check script left no result in the DOM (%d bytes dumped)", len(out))
	}
	var res struct {
		SVGs     int      `json:"svgs"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &res); err != nil {
		t.Fatalf("check result %q: %v", m[1], err)
	}
	return res.SVGs, res.Problems
}

// The HTML report, rendered by a real browser at 1280 px, shows every bar
// label and layout name inside its chart and every hit-ratio line on its own
// (no two coincide), with layouts whose bars are longest and whose hit
// ratios are all 0% — what clipped labels and hid lines before. A
// screenshot at 1280 px is taken too (written to $STRATA_SCREENSHOT_DIR when
// set, for a person to look at).
func TestHTMLReportVisibleInBrowser(t *testing.T) {
	needChromium(t)
	ss := trainSubset(t, 6, Managed)
	layouts := AllLayouts() // seeds, peers, cachefit
	rep, err := Run(ss, Managed, Options{Provider: "anthropic", Layouts: layouts})
	if err != nil {
		t.Fatal(err)
	}
	var zero int
	for _, l := range layouts {
		if rep.Layouts[l].HitRatio == 0 {
			zero++
		}
	}
	if zero < 2 {
		t.Fatalf("the fixture must have several layouts at 0%% hit ratio (the overlap case); has %d", zero)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, rep, rep); err != nil { // two sections, as --scenario all writes
		t.Fatal(err)
	}
	svgs, problems := browserCheck(t, page.Bytes())
	if want := 2 * (1 + len(layouts)); svgs != want {
		t.Errorf("%d charts rendered; want %d", svgs, want)
	}
	for _, p := range problems {
		t.Error(p)
	}

	dir := os.Getenv("STRATA_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "report-1280.png")
	args := append(chromiumFlags(t), "--window-size=1280,1600", "--screenshot="+png, "file://"+file)
	if out, err := exec.Command(chromium, args...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: %v", png, err)
	}
}

// The browser check itself fails on a page with the two defects it exists
// for: a bar label running past its chart's right edge and two hit-ratio
// lines drawn on the same points.
func TestBrowserCheckCatchesClippingAndHiddenLines(t *testing.T) {
	needChromium(t)
	page := []byte(`<!doctype html><html><body>
<svg width="200" height="60"><text x="150" y="20">4.525× · $118.79</text></svg>
<svg width="200" height="60"><polyline points="0,50 100,50" stroke="#000"/><polyline points="0,50 100,50" stroke="#f00"/></svg>
</body></html>`)
	_, problems := browserCheck(t, page)
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "4.525× · $118.79") || !strings.Contains(joined, "clipped") {
		t.Errorf("clipped label not reported: %q", joined)
	}
	if !strings.Contains(joined, "coincide") {
		t.Errorf("coinciding lines not reported: %q", joined)
	}
}

// trainSubset derives the first n train trajectories in scenario s.
func trainSubset(t *testing.T, n int, s Scenario) []*Session {
	t.Helper()
	return trainSubsetWith(t, n, s, Derivation{})
}

func trainSubsetWith(t *testing.T, n int, s Scenario, d Derivation) []*Session {
	t.Helper()
	dir := shared.Path(t, "data/trajectories/mini-swe-agent/train")
	files, err := filepath.Glob(filepath.Join(dir, "*.traj.json"))
	if err != nil || len(files) < n {
		t.Fatalf("train has %d trajectories (%v); want ≥ %d", len(files), err, n)
	}
	tmp := t.TempDir()
	for _, f := range files[:n] {
		if err := os.Symlink(f, filepath.Join(tmp, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	ss, err := LoadDirWith(tmp, s, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}
