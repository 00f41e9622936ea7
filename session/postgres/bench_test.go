package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-agent/strata/session"
	"github.com/strata-agent/strata/session/postgres/pgtest"
	"github.com/strata-agent/strata/session/storetest"
)

// counting counts the Steps a store wrote.
type counting struct {
	session.Store
	steps atomic.Int64
}

func (c *counting) WriteStep(ctx context.Context, s session.Step) error {
	err := c.Store.WriteStep(ctx, s)
	if err == nil {
		c.steps.Add(1)
	}
	return err
}

// eightSessions records MainScript in 8 new sessions at once, each through
// its own Recorder (8 concurrent writers), and returns the steps written and
// the time taken.
func eightSessions(b *testing.B, s *counting, round int) (int64, time.Duration) {
	ctx := context.Background()
	before := s.steps.Load()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		sess, err := s.CreateSession(ctx, session.SessionMeta{})
		if err != nil {
			b.Fatal(err)
		}
		a := storetest.MainScript(fmt.Sprintf("r%d-w%d", round, w))
		wg.Go(func() {
			r := session.NewRecorder(s, sess.ID)
			for _, e := range a.Events {
				if err := r.Observe(ctx, e); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return s.steps.Load() - before, time.Since(start)
}

// Steps written per second with 8 concurrent sessions, SQLite (a WAL file,
// synchronous=FULL) against PostgreSQL (the test server), in one run:
// sqlite-steps/s, postgres-steps/s and their ratio pg/sqlite.
//
//	STRATA_TEST_POSTGRES=$(scripts/postgres-test start) go test ./session/postgres -run '^$' -bench EightSessions -benchtime 20x
func BenchmarkEightSessions(b *testing.B) {
	lite, err := session.Open(b.TempDir() + "/strata.db")
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	pg := open(b, pgtest.EmptyDSN(b))
	stores := []*counting{{Store: lite}, {Store: pg}}
	var steps [2]int64
	var took [2]time.Duration
	for i := 0; b.Loop(); i++ {
		for k, s := range stores {
			n, d := eightSessions(b, s, i)
			steps[k] += n
			took[k] += d
		}
	}
	rate := func(k int) float64 { return float64(steps[k]) / took[k].Seconds() }
	b.ReportMetric(rate(0), "sqlite-steps/s")
	b.ReportMetric(rate(1), "postgres-steps/s")
	b.ReportMetric(rate(1)/rate(0), "pg/sqlite")
}
