package cachesim

import (
	"testing"
	"time"
)

// agentSession returns an append-only agent session of turns requests: 3 tool
// and system blocks, then 2 message blocks (assistant call, tool result) per
// turn, a breakpoint on the system block and on the last block, 10 s apart.
func agentSession(turns int) []Request {
	var hist []Block
	key := Key(1000)
	prefix := []Block{{Key: 1, Tokens: 1800}, {Key: 2, Tokens: 900}, {Key: 3, Tokens: 2500, Breakpoint: true, TTL: TTL1h}}
	out := make([]Request, turns)
	for i := range out {
		key++
		hist = append(hist, Block{Key: key, Tokens: 120})
		key++
		hist = append(hist, Block{Key: key, Tokens: int64(200 + (i*37)%900)})
		bs := make([]Block, 0, len(prefix)+len(hist))
		bs = append(append(bs, prefix...), hist...)
		bs[len(bs)-1].Breakpoint, bs[len(bs)-1].TTL = true, TTL5m
		out[i] = Request{Blocks: bs, At: t0.Add(time.Duration(i) * 10 * time.Second), Output: 150}
	}
	return out
}

// BenchmarkSimulate measures throughput over a 200-turn session, restarting
// the session when it ends (requests/s reported).
func BenchmarkSimulate(b *testing.B) {
	session := agentSession(200)
	for _, model := range []string{"claude-sonnet-4-5", "gpt-4.1", "gemini-3-pro-preview"} {
		p, _ := Lookup(model)
		b.Run(p.Provider, func(b *testing.B) {
			sim := ForPrice(p)
			b.ReportAllocs()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				k := i % len(session)
				if k == 0 {
					sim.Reset()
				}
				if _, err := sim.Simulate(session[k]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
		})
	}
}

// BenchmarkOracle measures the oracle over a 200-turn session.
func BenchmarkOracle(b *testing.B) {
	session := agentSession(200)
	p, _ := Lookup("claude-sonnet-4-5")
	b.ReportAllocs()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		Oracle(p, session)
	}
	b.ReportMetric(float64(b.N*len(session))/time.Since(start).Seconds(), "requests/s")
}

// BenchmarkIncremental measures the cost of simulating one more request at
// session depth 10 and 1000 turns (the state is warmed with the earlier
// turns, outside the timer) and reports the ratio. The input is a whole
// prompt, so the work per request is linear in the prompt's blocks (23 vs
// 2003 here); the ratio shows how close to that the simulator stays.
func BenchmarkIncremental(b *testing.B) {
	long := agentSession(1000)
	short := long[:10]
	for _, model := range []string{"claude-sonnet-4-5", "gpt-4.1"} {
		p, _ := Lookup(model)
		b.Run(p.Provider, func(b *testing.B) {
			warm := func(s []Request) Simulator {
				sim := ForPrice(p)
				for _, r := range s[:len(s)-1] {
					_, _ = sim.Simulate(r)
				}
				return sim
			}
			s10, s1000 := warm(short), warm(long)
			last10, last1000 := short[len(short)-1], long[len(long)-1]
			var d10, d1000 time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				_, _ = s10.Simulate(last10)
				d10 += time.Since(t)
				t = time.Now()
				_, _ = s1000.Simulate(last1000)
				d1000 += time.Since(t)
			}
			n := float64(b.N)
			b.ReportMetric(float64(d10.Nanoseconds())/n, "ns/req@10")
			b.ReportMetric(float64(d1000.Nanoseconds())/n, "ns/req@1000")
			b.ReportMetric(float64(d1000)/float64(d10), "ratio_1000/10")
			b.ReportMetric(float64(len(last1000.Blocks))/float64(len(last10.Blocks)), "block_ratio")
		})
	}
}
