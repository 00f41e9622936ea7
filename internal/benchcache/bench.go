package benchcache

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
)

// DefaultModels is the model priced for each provider when Options.Model is
// empty.
var DefaultModels = map[string]string{
	"anthropic": "claude-sonnet-4-5", "bedrock": "claude-sonnet-4-5", "openai": "gpt-5",
	"gemini": "gemini-3-pro-preview", "deepseek": "deepseek-chat",
}

// Options configure Run.
type Options struct {
	// Provider is the cache simulator: anthropic, bedrock, openai, gemini or
	// deepseek.
	Provider string
	// Model is the price-table model ("" = DefaultModels[Provider]).
	Model string
	// Layouts are the layout names to price, in report order.
	Layouts []string
	// Factories, when they hold a name of Layouts, build that layout
	// instead of prompt.Lookup (variants that are not registered, such as
	// a tiered layout with other thresholds). Called once per session.
	Factories map[string]func() prompt.Layout
	// Counter counts block tokens (nil = token.Estimator, fast).
	Counter token.Counter
	// Derivation is what the sessions were derived with; Run only reports
	// it (Report.Agent, Pacing, Parallel).
	Derivation Derivation
	// ReadStep, when > 0, replaces the price table's read granularity
	// (tokens; cachesim.Price.CacheGranularityTokens) for the automatic
	// caches (OpenAI, Gemini, DeepSeek) and the oracle: 1 prices reads
	// without rounding, which separates what a layout keeps cached from
	// where its prompt lengths fall between steps (docs/cachefit.md, rule
	// 7b). 0 = the table's. Anthropic and Bedrock have no steps.
	ReadStep int64
	// Progress, when set, is called after each trajectory with the number
	// done and the total (from several goroutines, never concurrently).
	Progress func(done, total int)
}

// Totals is one priced column: tokens and USD of a layout, the oracle or the
// observed usage, summed over requests.
type Totals struct {
	CostUSD    float64 `json:"cost_usd"`
	HitRatio   float64 `json:"hit_ratio"` // cache_read / prompt tokens
	Input      int64   `json:"input_tokens"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_write_tokens"`
	Output     int64   `json:"output_tokens"`
	Requests   int     `json:"requests"`
	// Pings is the keep-alive pings the runtime sent for the layout while
	// sessions idled (prompt.KeepsAliveOf; cachesim.WithPings): each
	// re-sends the previous request with a one-token answer, and its
	// tokens and cost are in the figures above; Requests does not count
	// them.
	Pings int `json:"pings,omitempty"`
	// PromptPerCall is the mean prompt tokens per request (input + cache
	// read + cache write over requests): a layout that is cheap because it
	// sends less shows here.
	PromptPerCall float64 `json:"prompt_tokens_per_call"`
}

// finish recomputes the derived ratios.
func (t *Totals) finish() {
	p := t.Input + t.CacheRead + t.CacheWrite
	t.HitRatio, t.PromptPerCall = 0, 0
	if p > 0 {
		t.HitRatio = float64(t.CacheRead) / float64(p)
	}
	if t.Requests > 0 {
		t.PromptPerCall = float64(p) / float64(t.Requests)
	}
}

// add sums o into t; HitRatio and PromptPerCall are recomputed.
func (t *Totals) add(o Totals) {
	t.CostUSD += o.CostUSD
	t.Input += o.Input
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
	t.Output += o.Output
	t.Requests += o.Requests
	t.Pings += o.Pings
	t.finish()
}

func totals(p cachesim.Price, r cachesim.Result) Totals {
	t := Totals{CostUSD: p.Cost(r), Input: r.Input, CacheRead: r.CacheRead, CacheWrite: r.CacheWrite, Output: r.Output, Requests: int(r.Requests)}
	t.finish()
	return t
}

// Observed is what the provider reported for the recorded sessions, priced
// by the recorded cost (usage.cost) of the recorded model.
type Observed struct {
	Totals
	Model string `json:"model"`
}

// TrajectoryResult is one trajectory's figures.
type TrajectoryResult struct {
	Name    string            `json:"name"`
	Calls   int               `json:"calls"`
	Layouts map[string]Totals `json:"layouts"`
	Oracle  Totals            `json:"oracle"`
	// OracleLayout is the layout whose requests give the lowest oracle (the
	// oracle is the minimum over the layouts priced).
	OracleLayout string    `json:"oracle_layout"`
	Observed     *Observed `json:"observed,omitempty"`
	// HitPerCall is each layout's hit ratio per call, in call order.
	HitPerCall map[string][]float64 `json:"hit_ratio_per_call"`
}

// Report is the result of Run, in the JSON shape of DESIGN.md plus details.
type Report struct {
	Provider     string            `json:"provider"`
	Scenario     Scenario          `json:"scenario"`
	Model        string            `json:"model"`
	Layouts      map[string]Totals `json:"layouts"`
	Oracle       Totals            `json:"oracle"`
	Observed     *Observed         `json:"observed,omitempty"`
	Trajectories int               `json:"trajectories"`
	Order        []string          `json:"layout_order"`
	// Groups maps each layout of Order to its group (Group).
	Groups map[string]string `json:"layout_groups"`
	// Agent is the agent whose static context the calls carry ("" = the
	// recording's own) and StaticTokens its size in estimated tokens.
	Agent        string `json:"agent,omitempty"`
	StaticTokens int    `json:"static_tokens,omitempty"`
	// ReadStep is Options.ReadStep when it replaced the price table's read
	// granularity (automatic caches only; 0 = the table's).
	ReadStep int64 `json:"read_step,omitempty"`
	// Pacing is the pause model (paced scenario only).
	Pacing *Pacing `json:"pacing,omitempty"`
	// Parallel is the tool calls per response (parallel scenario only).
	Parallel int                `json:"parallel,omitempty"`
	Details  []TrajectoryResult `json:"per_trajectory"`
}

// Run prices every session with every layout. The oracle of a session is the
// lowest oracle over the layouts' requests (DESIGN.md "Oracle"), so it is a
// lower bound for each layout priced. Errors name the session, layout and
// call.
func Run(sessions []*Session, scenario Scenario, o Options) (*Report, error) {
	if o.Model == "" {
		o.Model = DefaultModels[o.Provider]
	}
	if _, ok := DefaultModels[o.Provider]; !ok {
		return nil, fmt.Errorf("unknown provider %q (valid: anthropic, bedrock, openai, gemini, deepseek)", o.Provider)
	}
	price, ok := cachesim.Lookup(o.Model)
	if !ok {
		return nil, fmt.Errorf("no price for model %q in cachesim/prices.json", o.Model)
	}
	stepped := o.ReadStep > 0 && o.Provider != "anthropic" && o.Provider != "bedrock"
	if stepped {
		price.CacheGranularityTokens = o.ReadStep
	}
	if o.Counter == nil {
		o.Counter = token.Estimator{}
	}
	for _, l := range o.Layouts {
		if _, err := o.layout(l); err != nil {
			return nil, err
		}
	}
	rep := &Report{Provider: o.Provider, Scenario: scenario, Model: price.ID, Layouts: map[string]Totals{},
		Trajectories: len(sessions), Order: o.Layouts, Groups: map[string]string{}, Details: make([]TrajectoryResult, len(sessions))}
	for _, l := range o.Layouts {
		rep.Groups[l] = Group(l)
	}
	if stepped {
		rep.ReadStep = o.ReadStep
	}
	d := o.Derivation.withDefaults()
	if d.Static != nil {
		rep.Agent, rep.StaticTokens = d.Static.Name, d.Static.StaticTokens()
	}
	switch scenario {
	case Paced:
		rep.Pacing = &d.Pacing
	case Parallel:
		rep.Parallel = d.Parallel
	}
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, s := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rep.Details[i], errs[i] = runSession(s, price, o)
			mu.Lock()
			done++
			if o.Progress != nil {
				o.Progress(done, len(sessions))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, d := range rep.Details {
		for l, t := range d.Layouts {
			x := rep.Layouts[l]
			x.add(t)
			rep.Layouts[l] = x
		}
		rep.Oracle.add(d.Oracle)
		if d.Observed != nil {
			if rep.Observed == nil {
				rep.Observed = &Observed{Model: d.Observed.Model}
			}
			rep.Observed.add(d.Observed.Totals)
		}
	}
	return rep, nil
}

// simulator returns the provider's cache simulator for price.
func simulator(provider string, price cachesim.Price) cachesim.Simulator {
	if provider == "bedrock" {
		return cachesim.NewBedrock(price.MinCacheableTokens)
	}
	return cachesim.ForPrice(price)
}

// api is the wire family layouts assemble for (panels differs per family).
func api(provider string) llm.API {
	switch provider {
	case "anthropic", "bedrock":
		return llm.APIAnthropic
	}
	return llm.APIOpenAIChat
}

// layout returns a fresh instance of the layout name (Factories first).
func (o Options) layout(name string) (prompt.Layout, error) {
	if f, ok := o.Factories[name]; ok {
		return f(), nil
	}
	return prompt.Lookup(name)
}

func runSession(s *Session, price cachesim.Price, o Options) (TrajectoryResult, error) {
	tr := TrajectoryResult{Name: s.Name, Calls: len(s.Calls), Layouts: map[string]Totals{}, HitPerCall: map[string][]float64{}}
	best := -1.0
	for _, name := range o.Layouts {
		layout, err := o.layout(name)
		if err != nil {
			return tr, err
		}
		sim := simulator(o.Provider, price)
		reqs := make([]cachesim.Request, 0, len(s.Calls))
		for i, c := range s.Calls {
			pc := c.Context
			pc.Model, pc.API = price.ID, api(o.Provider)
			req, _, err := layout.Assemble(&pc)
			if err != nil {
				return tr, fmt.Errorf("%s: layout %s, call %d: %w", s.Name, name, i, err)
			}
			reqs = append(reqs, cachesim.FromRequest(req, o.Counter, c.At, c.Output))
		}
		var policy func(cachesim.Request) cachesim.KeepAlive
		if prompt.KeepsAliveOf(layout) {
			policy = func(r cachesim.Request) cachesim.KeepAlive { return cachesim.KeepAliveForRequest(price, r) }
		}
		trace, ping := cachesim.WithPings(reqs, policy)
		var sum cachesim.Result
		call, pings := 0, 0
		for n, r := range trace {
			res, err := sim.Simulate(r)
			if err != nil {
				return tr, fmt.Errorf("%s: layout %s, call %d: %w", s.Name, name, call, err)
			}
			sum = sum.Add(res)
			if ping[n] {
				pings++
				continue
			}
			call++
			tr.HitPerCall[name] = append(tr.HitPerCall[name], res.HitRatio())
		}
		sum.Requests -= int64(pings)
		t := totals(price, sum)
		t.Pings = pings
		tr.Layouts[name] = t
		or := totals(price, cachesim.Sum(cachesim.Oracle(price, reqs)))
		if best < 0 || or.CostUSD < best {
			best, tr.Oracle, tr.OracleLayout = or.CostUSD, or, name
		}
	}
	if obs := observed(s); obs != nil {
		tr.Observed = obs
	}
	return tr, nil
}

// observed totals the recorded usage, when the trajectory has any.
func observed(s *Session) *Observed {
	var t Totals
	for _, c := range s.Calls {
		u := c.Observed
		if u.PromptTokens == 0 {
			return nil
		}
		t.add(Totals{CostUSD: u.CostUSD, Input: u.PromptTokens - u.CachedTokens, CacheRead: u.CachedTokens,
			Output: u.CompletionTokens, Requests: 1})
	}
	return &Observed{Totals: t, Model: s.Model}
}

// Ratio is a layout's cost as a ratio to the oracle.
type Ratio struct {
	Layout string
	Ratio  float64
}

// Ratios returns each layout's total cost as a ratio to the oracle, in layout
// order.
func (r *Report) Ratios() []Ratio {
	out := make([]Ratio, 0, len(r.Order))
	for _, l := range r.Order {
		x := 0.0
		if r.Oracle.CostUSD > 0 {
			x = r.Layouts[l].CostUSD / r.Oracle.CostUSD
		}
		out = append(out, Ratio{l, x})
	}
	return out
}
