// Package waterfall reads the spans an OpenTelemetry Collector's file
// exporter wrote (OTLP/JSON, one export request per line) and draws one
// trace as a waterfall SVG: a bar per span on a shared time axis, indented
// under its parent (docs/telemetry.md shows one).
package waterfall

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Span is one span of the file: its ids (hex), name, times (Unix
// nanoseconds), attributes (values as text) and whether its status is an
// error.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Start, End                int64
	Attrs                     map[string]string
	Error                     bool
}

// Metric is one metric of the file: its name and, for a histogram, the
// data points' counts summed.
type Metric struct {
	Name  string
	Count int64
}

type anyValue struct {
	StringValue *string  `json:"stringValue"`
	IntValue    *string  `json:"intValue"`
	DoubleValue *float64 `json:"doubleValue"`
	BoolValue   *bool    `json:"boolValue"`
	ArrayValue  *struct {
		Values []anyValue `json:"values"`
	} `json:"arrayValue"`
}

func (v anyValue) text() string {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.IntValue != nil:
		return *v.IntValue
	case v.DoubleValue != nil:
		return strconv.FormatFloat(*v.DoubleValue, 'g', -1, 64)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	case v.ArrayValue != nil:
		var parts []string
		for _, x := range v.ArrayValue.Values {
			parts = append(parts, x.text())
		}
		return strings.Join(parts, ",")
	}
	return ""
}

type fileLine struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []struct {
				TraceID      string `json:"traceId"`
				SpanID       string `json:"spanId"`
				ParentSpanID string `json:"parentSpanId"`
				Name         string `json:"name"`
				Start        string `json:"startTimeUnixNano"`
				End          string `json:"endTimeUnixNano"`
				Attributes   []struct {
					Key   string   `json:"key"`
					Value anyValue `json:"value"`
				} `json:"attributes"`
				Status struct {
					Code int `json:"code"`
				} `json:"status"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
	ResourceMetrics []struct {
		ScopeMetrics []struct {
			Metrics []struct {
				Name      string `json:"name"`
				Histogram *struct {
					DataPoints []struct {
						Count string `json:"count"`
					} `json:"dataPoints"`
				} `json:"histogram"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

// Read parses the file exporter's output: every span and metric of every
// line. A line that is not OTLP/JSON is an error naming its number.
func Read(r io.Reader) ([]Span, []Metric, error) {
	var spans []Span
	var metrics []Metric
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l fileLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, nil, fmt.Errorf("waterfall: line %d: %w (want the file exporter's OTLP/JSON)", n, err)
		}
		for _, rs := range l.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					x := Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentID: s.ParentSpanID, Name: s.Name,
						Attrs: map[string]string{}, Error: s.Status.Code == 2}
					x.Start, _ = strconv.ParseInt(s.Start, 10, 64)
					x.End, _ = strconv.ParseInt(s.End, 10, 64)
					for _, a := range s.Attributes {
						x.Attrs[a.Key] = a.Value.text()
					}
					spans = append(spans, x)
				}
			}
		}
		for _, rm := range l.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					x := Metric{Name: m.Name}
					if m.Histogram != nil {
						for _, dp := range m.Histogram.DataPoints {
							c, _ := strconv.ParseInt(dp.Count, 10, 64)
							x.Count += c
						}
					}
					metrics = append(metrics, x)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("waterfall: %w", err)
	}
	return spans, metrics, nil
}

// row is a span placed in the picture: its depth under the root.
type row struct {
	Span
	depth int
}

// order returns the spans of one trace depth-first, children by start time.
func order(spans []Span) []row {
	kids := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var roots []Span
	for _, s := range spans {
		if s.ParentID == "" || !ids[s.ParentID] {
			roots = append(roots, s)
		} else {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		}
	}
	byStart := func(a, b Span) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.SpanID, b.SpanID)) }
	var out []row
	var walk func(s Span, d int)
	walk = func(s Span, d int) {
		out = append(out, row{s, d})
		k := kids[s.SpanID]
		slices.SortFunc(k, byStart)
		for _, c := range k {
			walk(c, d+1)
		}
	}
	slices.SortFunc(roots, byStart)
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// label is what the picture says about a span besides its name.
func label(s Span) string {
	var parts []string
	if in, out := s.Attrs["gen_ai.usage.input_tokens"], s.Attrs["gen_ai.usage.output_tokens"]; in != "" {
		parts = append(parts, in+" in / "+out+" out tokens")
	}
	if r := s.Attrs["gen_ai.usage.cache_read.input_tokens"]; r != "" && r != "0" {
		parts = append(parts, r+" cached")
	}
	if c := s.Attrs["strata.cost_usd"]; c != "" {
		if f, err := strconv.ParseFloat(c, 64); err == nil {
			parts = append(parts, fmt.Sprintf("$%.4f", f))
		}
	}
	if e := s.Attrs["error.type"]; e != "" {
		parts = append(parts, "error "+e)
	}
	return strings.Join(parts, ", ")
}

// SVG draws the spans of trace traceID ("" = the trace of the first span)
// as a waterfall titled title: one row per span, depth-first, a bar from
// its start to its end on a common axis in milliseconds.
func SVG(w io.Writer, spans []Span, traceID, title string) error {
	if traceID == "" && len(spans) > 0 {
		traceID = spans[0].TraceID
	}
	var mine []Span
	for _, s := range spans {
		if s.TraceID == traceID {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		return fmt.Errorf("waterfall: no span of trace %q", traceID)
	}
	rows := order(mine)
	t0, t1 := rows[0].Start, rows[0].End
	for _, r := range rows {
		t0, t1 = min(t0, r.Start), max(t1, r.End)
	}
	span := float64(max(t1-t0, 1))
	const left, width, rowH, top = 330, 640, 34, 56
	h := top + rowH*len(rows) + 30
	x := func(t int64) float64 { return left + float64(t-t0)/span*width }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`+"\n", left+width+30, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="10" y="42" fill="#555">trace %s · %d spans · %.0f ms</text>`+"\n", html.EscapeString(traceID), len(rows), span/1e6)
	for i := 0; i <= 4; i++ { // time axis
		xi := left + float64(i)*width/4
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", xi, top-6, xi, h-24)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#777" text-anchor="middle">%.0f ms</text>`+"\n", xi, h-8, span/1e6*float64(i)/4)
	}
	colors := map[string]string{"invoke_agent": "#6a5acd", "chat": "#2e8b57", "execute_tool": "#d2691e"}
	for i, r := range rows {
		y := top + i*rowH
		op, _, _ := strings.Cut(r.Name, " ")
		fill := cmp.Or(colors[op], "#708090")
		if r.Error {
			fill = "#c0392b"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", 10+14*r.depth, y+14, html.EscapeString(r.Name))
		if l := label(r.Span); l != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#666" font-size="10">%s</text>`+"\n", 10+14*r.depth, y+27, html.EscapeString(l))
		}
		bw := max(x(r.End)-x(r.Start), 2)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="18" rx="3" fill="%s"/>`+"\n", x(r.Start), y+3, bw, fill)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333" font-size="10">%.0f ms</text>`+"\n", min(x(r.Start)+bw+4, left+width-40), y+16, float64(r.End-r.Start)/1e6)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
