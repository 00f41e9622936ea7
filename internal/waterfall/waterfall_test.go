package waterfall

import (
	"os"
	"strings"
	"testing"
)

// testdata/otlp.json is what a real OpenTelemetry Collector's file exporter
// wrote for `strata run` on the offline demo (scripts/otelcol/build's
// collector, OTLP/HTTP): Read finds its one trace of six spans and its two
// histograms, and SVG draws the spans depth-first under the root.
func TestReadAndDrawACollectorFile(t *testing.T) {
	f, err := os.Open("testdata/otlp.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, metrics, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 6 {
		t.Fatalf("%d spans; want 6", len(spans))
	}
	rows := order(spans)
	var got []string
	for _, r := range rows {
		op, _, _ := strings.Cut(r.Name, " ")
		got = append(got, strings.Repeat(">", r.depth)+op)
	}
	if strings.Join(got, " ") != "invoke_agent >chat >execute_tool >chat >execute_tool >chat" {
		t.Errorf("rows %v; want the loop then its calls in start order", got)
	}
	counts := map[string]int64{}
	for _, m := range metrics {
		counts[m.Name] += m.Count
	}
	if counts["gen_ai.client.token.usage"] != 6 || counts["gen_ai.client.operation.duration"] != 3 {
		t.Errorf("histogram counts %v; want 6 token usages and 3 durations (3 model calls)", counts)
	}
	var b strings.Builder
	if err := SVG(&b, spans, "", "demo"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if strings.Count(svg, "<rect") != 7 || !strings.Contains(svg, "execute_tool glob") || !strings.Contains(svg, spans[0].TraceID) {
		t.Errorf("the picture lacks a bar per span (and the background), the tool or the trace id:\n%s", svg)
	}
	if err := SVG(&b, spans, "nosuchtrace", "demo"); err == nil {
		t.Error("a trace id with no span drew a picture")
	}
	if _, _, err := Read(strings.NewReader("{\"resourceSpans\": 3}\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a line that is not OTLP/JSON: %v; want an error naming line 1", err)
	}
}
