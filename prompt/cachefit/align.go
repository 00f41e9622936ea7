package cachefit

import (
	"strings"
	"time"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/token"
)

// padHorizon is the fewest later requests a filler is assumed to be re-read
// by (alignment): a long session's worth, so a filler is placed only when it
// pays back even then.
const padHorizon = 100

// padHeader opens every alignment block, so the model (and a reader of the
// request) knows the block carries nothing.
const padHeader = "[cache step alignment: filler that carries no content; ignore it]"

// alignment returns the text of the block that pads the request req (whose
// cacheable part is req, without the reminder) up to the next read step of
// the automatic prefix cache ac, or "" when padding does not pay.
//
// An automatic cache reads the next request's prefix rounded down to ac's
// steps (prompt.AutoCache), so the r tokens of this request past the last
// step are paid at the full price again by the next request. Padding by p
// tokens, kept in place in every later request, makes the whole prefix
// readable. It pays when the next request's saving exceeds what the padding
// costs: this request sends p uncached tokens, the next reads them and every
// later one re-reads them at the cached price:
//
//	(1 − ρ)·r > p·(1 + ρ·(1 + H))
//
// with ρ = ac.ReadRatio and H the requests still to come. H is taken
// pessimistically as max(requests sent so far, padHorizon): a filler placed
// early is re-read by every later request, and estimating H as the requests
// already sent ("as many again") padded early requests of long sessions that
// then re-read the filler for far longer — under OpenAI's 128-token steps
// that cost more than it saved (docs/cachefit.md, rule 7b). Under the minimum (L < ac.Min: nothing
// is read) r is the whole request and p what reaches the minimum. The block
// must count exactly p tokens with ac.Counter, or no block is placed.
func alignment(req *llm.Request, ac *prompt.AutoCache, sent int) string {
	if ac == nil || ac.Step <= 1 {
		return ""
	}
	count := ac.Counter
	if count == nil {
		count = token.Estimator{}
	}
	total := cachesim.FromRequest(req, count, time.Time{}, 0).InputTokens()
	var r, p int64
	switch {
	case total < ac.Min:
		r, p = total, ac.Min-total
	default:
		r = (total - ac.Min) % ac.Step
		if r == 0 {
			return ""
		}
		p = ac.Step - r
	}
	rho, h := ac.ReadRatio, max(sent, padHorizon)
	if rho < 0 || rho >= 1 || float64(r)*(1-rho) <= float64(p)*(1+rho*float64(1+h)) {
		return ""
	}
	return filler(count, int(p))
}

// filler returns a text of exactly p tokens by count that starts with
// padHeader, or "" when there is none (p is under the header's tokens, or
// the counter's steps skip p).
func filler(count token.Counter, p int) string {
	if count.Count(padHeader) > p {
		return ""
	}
	text := func(k int) string { return padHeader + " " + strings.Repeat(".", k) }
	lo, hi := 0, 8*p+8 // smallest k with Count(text(k)) ≥ p lies in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		if count.Count(text(mid)) >= p {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if s := text(lo); count.Count(s) == p {
		return s
	}
	return ""
}
