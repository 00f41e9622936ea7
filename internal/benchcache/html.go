package benchcache

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// Chart geometry of the HTML report, in CSS pixels. The bar chart keeps
// barLabelRoom to the right of the longest bar for its "1.234× · $12.34"
// label, and barNameRoom to the left for the layout name, so no label is
// ever clipped by the SVG's edge.
const (
	chartW       = 860.0
	barNameRoom  = 120.0
	barLabelRoom = 170.0
	barRow       = 22.0
	groupGap     = 20.0
	panelW       = 270.0 // also .panel{width} in the page CSS
	panelH       = 96.0
	panelPad     = 28.0 // room above each hit-ratio panel for its title
)

// bar is one bar of the cost chart.
type bar struct {
	Layout, Label, Color string
	X, Y, W, H, TextY    float64
}

// groupHead is a group's heading in the cost chart.
type groupHead struct {
	Name string
	Y    float64
}

// panel is one layout's small hit-ratio chart: its own SVG, so no line can
// hide another.
type panel struct {
	Layout, Color, Points, Note string
}

// section is one report (scenario × provider) in the page.
type section struct {
	R                 *Report
	Desc              string
	Bars              []bar
	Heads             []groupHead
	ChartH, OracleX   float64
	Panels            []panel
	MaxCalls          int
	PanelW, PanelH    float64
	Rows              []tableRow
	ChartW, NameRight float64
}

// tableRow is one row of a section's totals table.
type tableRow struct {
	Group, Layout, Ratio string
	T                    Totals
}

var groupColors = map[string]string{GroupSeeds: "#8c8c8c", GroupPeers: "#d9822b", GroupStrata: "#27ae60", GroupOracle: "#222"}

// WriteHTML writes a self-contained report (inline SVG, no external assets)
// with one section per report: a bar chart of each layout's cost as a ratio
// to the oracle, grouped (seeds, peers, strata), a small chart per layout of
// its cache hit ratio over the calls (averaged over the trajectories, by call
// index), and the totals table with prompt tokens per call. It fails only
// when w does.
func WriteHTML(w io.Writer, reports ...*Report) error {
	secs := make([]section, 0, len(reports))
	for _, r := range reports {
		secs = append(secs, newSection(r))
	}
	return reportTmpl.Execute(w, map[string]any{"Sections": secs})
}

func newSection(r *Report) section {
	s := section{R: r, Desc: r.Describe(), ChartW: chartW, NameRight: barNameRoom - 8, PanelW: panelW, PanelH: panelH}
	maxRatio := 1.0
	for _, x := range r.Ratios() {
		maxRatio = math.Max(maxRatio, x.Ratio)
	}
	span := chartW - barNameRoom - barLabelRoom
	y := 0.0
	for _, g := range r.GroupedRatios() {
		y += groupGap
		s.Heads = append(s.Heads, groupHead{Name: g.Group, Y: y - 6})
		for _, x := range g.Ratios {
			s.Bars = append(s.Bars, bar{Layout: x.Layout, X: barNameRoom, Y: y + 3, W: span * x.Ratio / maxRatio, H: barRow - 6,
				TextY: y + barRow/2 + 5, Color: groupColors[g.Group],
				Label: fmt.Sprintf("%.3f× · $%.2f", x.Ratio, r.Layouts[x.Layout].CostUSD)})
			y += barRow
		}
	}
	s.ChartH = y + 20
	s.OracleX = barNameRoom + span/maxRatio

	for _, d := range r.Details {
		s.MaxCalls = max(s.MaxCalls, d.Calls)
	}
	for _, g := range r.GroupedRatios() {
		for _, x := range g.Ratios {
			s.Panels = append(s.Panels, hitPanel(r, x.Layout, s.MaxCalls, groupColors[g.Group]))
		}
	}
	for _, g := range r.GroupedRatios() {
		for i, x := range g.Ratios {
			row := tableRow{Layout: x.Layout, Ratio: fmt.Sprintf("%.3f", x.Ratio), T: r.Layouts[x.Layout]}
			if i == 0 {
				row.Group = g.Group
			}
			s.Rows = append(s.Rows, row)
		}
	}
	s.Rows = append(s.Rows, tableRow{Group: GroupOracle, Layout: "oracle", Ratio: "1.000", T: r.Oracle})
	return s
}

// hitPanel averages a layout's hit ratio per call index over the
// trajectories that reached that call (stopping where fewer than 3 did).
func hitPanel(r *Report, layout string, maxCalls int, color string) panel {
	sum := make([]float64, maxCalls)
	n := make([]int, maxCalls)
	for _, d := range r.Details {
		for k, h := range d.HitPerCall[layout] {
			sum[k] += h
			n[k]++
		}
	}
	var pts []string
	mean := 0.0
	for k := range sum {
		if n[k] < 3 {
			break
		}
		h := sum[k] / float64(n[k])
		mean += h
		x := 4 + (panelW-8)*float64(k)/float64(max(maxCalls-1, 1))
		y := 4 + (panelH-8)*(1-h)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	p := panel{Layout: layout, Color: color, Points: strings.Join(pts, " ")}
	if len(pts) > 0 {
		p.Note = fmt.Sprintf("mean %.0f%% over the first %d calls", 100*mean/float64(len(pts)), len(pts))
	}
	return p
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"usd": func(v float64) string { return fmt.Sprintf("$%.2f", v) },
	"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"f0":  func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"sub": func(a, b float64) float64 { return a - b },
	"add": func(a, b float64) float64 { return a + b },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>strata bench cache</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:900px;color:#222}table{border-collapse:collapse}
td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}
.note{color:#666;font-size:12px}.panels{display:flex;flex-wrap:wrap;gap:8px 14px}.panel{width:270px}
.panel svg{display:block;background:#fafafa;border:1px solid #e4e4e4}.panel .t{font-size:12px;height:18px;white-space:nowrap;overflow:visible}
section{margin-bottom:3em}</style></head><body>
<h1>What each request layout costs</h1>
<p class="note">Each section prices the same recorded sessions with every layout under one provider's prompt-cache rules.
The oracle is the lowest cost any layout's requests allow under those rules (TTL, minimum cacheable tokens, granularity):
shorter bars are better, 1.000× is the limit. Groups: <b>seeds</b> (the designs strata was built from), <b>peers</b>
(the caching rules of agents people run today), <b>strata</b> (cachefit).</p>
{{range $si, $s := .Sections}}<section>
<h2>{{$s.R.Provider}} · {{$s.R.Scenario}}</h2>
<p>{{$s.R.Trajectories}} recorded sessions, {{$s.Desc}}, priced as <b>{{$s.R.Model}}</b>. Oracle: {{usd $s.R.Oracle.CostUSD}}.</p>
<h3>Cost as a multiple of the oracle</h3>
<svg class="bars" width="{{$s.ChartW}}" height="{{$s.ChartH}}" role="img" aria-label="cost per layout as a ratio to the oracle">
{{range $s.Heads}}<text x="4" y="{{.Y}}" font-weight="bold" font-size="12">{{.Name}}</text>
{{end}}{{range $s.Bars}}<text x="{{$s.NameRight}}" y="{{.TextY}}" text-anchor="end">{{.Layout}}</text>
<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"/>
<text x="{{add (add .X .W) 6}}" y="{{.TextY}}">{{.Label}}</text>
{{end}}<line x1="{{$s.OracleX}}" x2="{{$s.OracleX}}" y1="4" y2="{{sub $s.ChartH 16}}" stroke="#000" stroke-dasharray="4 3"/>
<text x="{{$s.OracleX}}" y="{{sub $s.ChartH 3}}" text-anchor="middle" font-size="11">oracle</text>
</svg>
<h3>Cache hit ratio over the session</h3>
<p class="note">One chart per layout (so no line hides another): share of each request's prompt tokens read from the
cache, by call number (1 to {{$s.MaxCalls}}, left to right; 0% at the bottom, 100% at the top), averaged over the sessions
that reached that call.</p>
<div class="panels">
{{range $s.Panels}}<div class="panel"><div class="t"><b>{{.Layout}}</b> <span class="note">{{.Note}}</span></div>
<svg class="hit" width="{{$s.PanelW}}" height="{{$s.PanelH}}" role="img" aria-label="hit ratio by call, {{.Layout}}">
<line x1="4" x2="{{sub $s.PanelW 4}}" y1="4" y2="4" stroke="#ddd"/><line x1="4" x2="{{sub $s.PanelW 4}}" y1="{{sub $s.PanelH 4}}" y2="{{sub $s.PanelH 4}}" stroke="#bbb"/>
<polyline fill="none" stroke="{{.Color}}" stroke-width="2" points="{{.Points}}"/>
</svg></div>
{{end}}</div>
<h3>Totals</h3>
<table><tr><th>group</th><th>layout</th><th>cost</th><th>× oracle</th><th>hit ratio</th><th>prompt tokens / call</th><th>input</th><th>cache read</th><th>cache write</th><th>output</th></tr>
{{range $s.Rows}}<tr><td>{{.Group}}</td><td>{{.Layout}}</td><td>{{usd .T.CostUSD}}</td><td>{{.Ratio}}</td><td>{{pct .T.HitRatio}}</td><td>{{f0 .T.PromptPerCall}}</td>
<td>{{.T.Input}}</td><td>{{.T.CacheRead}}</td><td>{{.T.CacheWrite}}</td><td>{{.T.Output}}</td></tr>
{{end}}{{with $s.R.Observed}}<tr><td></td><td>observed ({{.Model}})</td><td>{{usd .CostUSD}}</td><td></td><td>{{pct .HitRatio}}</td><td>{{f0 .PromptPerCall}}</td><td>{{.Input}}</td>
<td>{{.CacheRead}}</td><td>{{.CacheWrite}}</td><td>{{.Output}}</td></tr>{{end}}
</table>
{{if $s.R.Observed}}<p class="note">Observed: what the recording's provider reported and billed for the same sessions, with its own model and
cache — not comparable in dollars to the simulated rows, shown for reference.</p>{{end}}
</section>
{{end}}</body></html>
`))
