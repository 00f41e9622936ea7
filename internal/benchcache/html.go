package benchcache

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// WriteHTML writes a self-contained report (inline SVG, no external assets):
// a bar chart of each layout's cost as a ratio to the oracle, a line chart of
// each layout's cache hit ratio over the calls (averaged over the
// trajectories, by call index), and the totals table.
func WriteHTML(w io.Writer, r *Report) error {
	type bar struct {
		Layout        string
		Ratio, Cost   float64
		Hit           float64
		X, Y, W, H    float64
		Color, Ratiot string
	}
	colors := []string{"#8c8c8c", "#d9822b", "#2b83d9", "#9b59b6", "#27ae60", "#c0392b"}
	const chartW, chartH, left = 640.0, 260.0, 90.0
	maxRatio := 1.0
	for _, x := range r.Ratios() {
		maxRatio = math.Max(maxRatio, x.Ratio)
	}
	var bars []bar
	rowH := chartH / float64(len(r.Order)+1)
	for i, x := range r.Ratios() {
		wd := (chartW - left - 60) * x.Ratio / maxRatio
		bars = append(bars, bar{Layout: x.Layout, Ratio: x.Ratio, Cost: r.Layouts[x.Layout].CostUSD, Hit: r.Layouts[x.Layout].HitRatio,
			X: left, Y: float64(i)*rowH + 8, W: wd, H: rowH - 10, Color: colors[i%len(colors)], Ratiot: fmt.Sprintf("%.3f×", x.Ratio)})
	}
	oracleX := left + (chartW-left-60)/maxRatio

	// Hit ratio per call index, averaged over trajectories having that call.
	type line struct {
		Layout, Color, Points string
	}
	maxCalls := 0
	for _, d := range r.Details {
		maxCalls = max(maxCalls, d.Calls)
	}
	var lines []line
	for i, l := range r.Order {
		sum := make([]float64, maxCalls)
		n := make([]int, maxCalls)
		for _, d := range r.Details {
			for k, h := range d.HitPerCall[l] {
				sum[k] += h
				n[k]++
			}
		}
		var pts []string
		for k := range sum {
			if n[k] < 3 { // too few trajectories that long to average
				break
			}
			x := left + (chartW-left-20)*float64(k)/float64(max(maxCalls-1, 1))
			y := 10 + (chartH-30)*(1-sum[k]/float64(n[k]))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		lines = append(lines, line{Layout: l, Color: colors[i%len(colors)], Points: strings.Join(pts, " ")})
	}
	data := map[string]any{"R": r, "Bars": bars, "OracleX": oracleX, "ChartW": chartW, "ChartH": chartH, "Left": left,
		"Lines": lines, "MaxCalls": maxCalls, "Ratios": r.Ratios()}
	return reportTmpl.Execute(w, data)
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"usd":   func(v float64) string { return fmt.Sprintf("$%.2f", v) },
	"pct":   func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"f3":    func(v float64) string { return fmt.Sprintf("%.3f", v) },
	"sub":   func(a, b float64) float64 { return a - b },
	"add":   func(a, b float64) float64 { return a + b },
	"mul14": func(i int) float64 { return float64(14 * i) },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>strata bench cache — {{.R.Provider}} / {{.R.Scenario}}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:900px;color:#222}table{border-collapse:collapse}
td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}th:first-child,td:first-child{text-align:left}
.note{color:#666;font-size:12px}</style></head><body>
<h1>What each request layout costs</h1>
<p>{{.R.Trajectories}} recorded sessions, scenario <b>{{.R.Scenario}}</b>, priced as <b>{{.R.Model}}</b> under the
<b>{{.R.Provider}}</b> prompt-cache rules. The oracle ({{usd .R.Oracle.CostUSD}}) is the lowest cost any layout could reach:
shorter bars are better, 1.000× is the limit.</p>
<h2>Cost as a multiple of the oracle</h2>
<svg width="{{.ChartW}}" height="{{.ChartH}}" role="img" aria-label="cost per layout as a ratio to the oracle">
{{range .Bars}}<text x="{{sub .X 8}}" y="{{add .Y 16}}" text-anchor="end">{{.Layout}}</text>
<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"/>
<text x="{{add (add .X .W) 6}}" y="{{add .Y 16}}">{{.Ratiot}} · {{usd .Cost}}</text>
{{end}}<line x1="{{.OracleX}}" x2="{{.OracleX}}" y1="0" y2="{{.ChartH}}" stroke="#000" stroke-dasharray="4 3"/>
<text x="{{.OracleX}}" y="{{sub .ChartH 2}}" text-anchor="middle" font-size="11">oracle</text>
</svg>
<h2>Cache hit ratio over the session</h2>
<p class="note">Share of each request's prompt tokens read from the cache, by call number, averaged over the sessions that
reached that call.</p>
<svg width="{{.ChartW}}" height="{{.ChartH}}" role="img" aria-label="hit ratio by call">
<line x1="{{.Left}}" x2="{{.Left}}" y1="10" y2="{{sub .ChartH 20}}" stroke="#999"/>
<text x="{{sub .Left 6}}" y="14" text-anchor="end" font-size="11">100%</text>
<text x="{{sub .Left 6}}" y="{{sub .ChartH 20}}" text-anchor="end" font-size="11">0%</text>
<text x="{{.Left}}" y="{{.ChartH}}" font-size="11">call 1</text>
<text x="{{sub .ChartW 20}}" y="{{.ChartH}}" text-anchor="end" font-size="11">call {{.MaxCalls}}</text>
{{range $i, $l := .Lines}}<polyline fill="none" stroke="{{$l.Color}}" stroke-width="2" points="{{$l.Points}}"/>
<text x="{{sub $.ChartW 4}}" y="{{add 20 (mul14 $i)}}" text-anchor="end" fill="{{$l.Color}}">{{$l.Layout}}</text>
{{end}}</svg>
<h2>Totals</h2>
<table><tr><th>layout</th><th>cost</th><th>× oracle</th><th>hit ratio</th><th>input</th><th>cache read</th><th>cache write</th><th>output</th></tr>
{{range .Ratios}}{{$t := index $.R.Layouts .Layout}}<tr><td>{{.Layout}}</td><td>{{usd $t.CostUSD}}</td><td>{{f3 .Ratio}}</td><td>{{pct $t.HitRatio}}</td>
<td>{{$t.Input}}</td><td>{{$t.CacheRead}}</td><td>{{$t.CacheWrite}}</td><td>{{$t.Output}}</td></tr>
{{end}}<tr><td>oracle</td><td>{{usd .R.Oracle.CostUSD}}</td><td>1.000</td><td>{{pct .R.Oracle.HitRatio}}</td><td>{{.R.Oracle.Input}}</td>
<td>{{.R.Oracle.CacheRead}}</td><td>{{.R.Oracle.CacheWrite}}</td><td>{{.R.Oracle.Output}}</td></tr>
{{with .R.Observed}}<tr><td>observed ({{.Model}})</td><td>{{usd .CostUSD}}</td><td></td><td>{{pct .HitRatio}}</td><td>{{.Input}}</td>
<td>{{.CacheRead}}</td><td>{{.CacheWrite}}</td><td>{{.Output}}</td></tr>{{end}}
</table>
<p class="note">Observed: what the recording's provider reported and billed for the same sessions, with its own model and
cache — not comparable in dollars to the simulated rows, shown for reference.</p>
</body></html>
`))
