package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// seqs collects the Seq (or, for Dropped notices, -DroppedCount) of the
// events an observer sees.
type seqs struct {
	mu  sync.Mutex
	got []int64
}

func (s *seqs) observe(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Kind == Dropped {
		s.got = append(s.got, -e.DroppedCount)
		return
	}
	s.got = append(s.got, e.Seq)
}

func (s *seqs) list() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// subscribers is how many subscriptions the bus delivers to.
func (b *Bus) subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

func emitN(b *Bus, n int) {
	for range n {
		b.Emit(Event{Kind: Progress})
	}
}

// Every Block observer sees every event, in Seq order, also when several
// goroutines emit at once and the queues are far smaller than the stream;
// Close returns only after all of them have been delivered.
func TestBlockObserversSeeEveryEventInOrder(t *testing.T) {
	b := NewBus()
	var obs [3]seqs
	b.Subscribe(obs[0].observe)
	b.Subscribe(obs[1].observe, WithQueueSize(4))
	b.Subscribe(obs[2].observe, WithQueueSize(0))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { emitN(b, 500) })
	}
	wg.Wait()
	b.Close()
	for i := range obs {
		if got := obs[i].list(); !slices.Equal(got, seqRange(1, 2000)) {
			t.Errorf("observer %d saw %d events, first out of order at %d", i, len(got), firstGap(got))
		}
	}
	if e := b.Emit(Event{Kind: Progress}); e.Seq != 0 {
		t.Errorf("emit after close stamped seq %d", e.Seq)
	}
}

func firstGap(got []int64) int {
	for i, s := range got {
		if s != int64(i+1) {
			return i
		}
	}
	return -1
}

// blocked is an observer that records each event and then waits for one
// value on release (or for release to be closed).
type blocked struct {
	seqs
	release chan struct{}
}

func newBlocked() *blocked { return &blocked{release: make(chan struct{})} }

func (o *blocked) observe(e Event) {
	o.seqs.observe(e)
	<-o.release
}

// With the Block policy a full queue makes Emit (and any emitter behind it)
// wait until the observer takes an event; nothing is dropped.
func TestBlockPolicyBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		o := newBlocked()
		sub := b.Subscribe(o.observe, WithQueueSize(2))
		emitN(b, 3) // 1 is being observed, 2 and 3 fill the queue
		fourth := emitInBackground(b)
		fifth := emitInBackground(b) // waits behind the 4th
		if isClosed(fourth) || isClosed(fifth) {
			t.Fatal("Emit returned while the Block observer's queue was full")
		}
		o.release <- struct{}{} // the observer finishes 1 and takes 2
		synctest.Wait()
		if !isClosed(fourth) || isClosed(fifth) {
			t.Fatalf("after one slot freed: 4th returned %v, 5th returned %v; want true, false", isClosed(fourth), isClosed(fifth))
		}
		close(o.release)
		b.Close()
		if got := o.list(); !slices.Equal(got, seqRange(1, 5)) || sub.Dropped() != 0 {
			t.Errorf("observer saw %v, dropped %d; want 1…5, 0", got, sub.Dropped())
		}
	})
}

// emitInBackground starts one Emit on its own goroutine and, inside a
// synctest bubble, waits until it has returned or is durably blocked; the
// channel is closed once it has returned.
func emitInBackground(b *Bus) chan struct{} {
	done := make(chan struct{})
	go func() { b.Emit(Event{Kind: Progress}); close(done) }()
	synctest.Wait()
	return done
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// With the Drop policy Emit never waits; what does not fit is counted
// exactly and announced by one Dropped notice before the next delivered
// event, or last at Close.
func TestDropPolicyCountsExactly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int
		emits     int  // emitted while the observer holds event 1
		thenEmits bool // emit one more after the observer caught up
		want      []int64
	}{
		{"notice before the next event", 2, 10, true, []int64{1, 2, 3, -7, 11}},
		{"notice at close", 2, 5, false, []int64{1, 2, 3, -2}},
		{"nothing dropped", 4, 5, true, []int64{1, 2, 3, 4, 5, 6}},
		{"no queue", 0, 4, true, []int64{1, -3, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBus()
				o := newBlocked()
				sub := b.Subscribe(o.observe, WithQueueSize(tc.size), WithPolicy(Drop))
				synctest.Wait() // the observer is waiting for its first event
				emitN(b, 1)
				synctest.Wait() // and now holds it
				emitN(b, tc.emits-1)
				var want int64
				for _, s := range tc.want {
					if s < 0 {
						want = -s
					}
				}
				if sub.Dropped() != want {
					t.Errorf("Dropped() = %d after the burst; want %d", sub.Dropped(), want)
				}
				close(o.release)
				synctest.Wait() // the observer has caught up
				if tc.thenEmits {
					b.Emit(Event{Kind: Progress})
				}
				b.Close()
				if got := o.list(); !slices.Equal(got, tc.want) {
					t.Errorf("observer saw %v; want %v (negative: a Dropped notice)", got, tc.want)
				}
			})
		})
	}
}

// The Dropped notice names the lost run of Seq and carries no Seq itself.
func TestDroppedNoticeNamesTheLostRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		release := make(chan struct{})
		var notices []Event
		b.Subscribe(func(e Event) {
			if e.Kind == Dropped {
				notices = append(notices, e)
			}
			<-release
		}, WithQueueSize(1), WithPolicy(Drop))
		emitN(b, 1)
		synctest.Wait() // the observer holds 1
		emitN(b, 5)     // 2 queued, 3–6 dropped
		close(release)
		b.Close()
		if len(notices) != 1 || notices[0].Seq != 0 || notices[0].DroppedCount != 4 ||
			!strings.Contains(notices[0].Text, "seq 3–6") || notices[0].Time.IsZero() {
			t.Errorf("notices %+v; want one with count 4 naming seq 3–6", notices)
		}
	})
}

// An observer may unsubscribe itself, also while an Emit waits for its full
// queue: that Emit goes on, the observer sees nothing more, and its
// goroutine returns without the bus being closed (synctest.Test fails on a
// goroutine left blocked).
func TestUnsubscribeFromInsideObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		release := make(chan struct{})
		var seen seqs
		var sub *Subscription
		sub = b.Subscribe(func(e Event) {
			seen.observe(e)
			<-release
			sub.Unsubscribe()
		}, WithQueueSize(1))
		emitN(b, 2) // 1 observed, 2 queued
		third := emitInBackground(b)
		if isClosed(third) {
			t.Fatal("Emit returned while the queue was full")
		}
		close(release)
		<-third
		<-sub.Done()
		emitN(b, 2)
		if got := seen.list(); !slices.Equal(got, []int64{1}) {
			t.Errorf("observer saw %v after unsubscribing at 1; want [1]", got)
		}
	})
}

// Unsubscribe from outside ends the observer's goroutine without Close, and
// Close then does not wait for it.
func TestUnsubscribeEndsGoroutineWithoutClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		var subs []*Subscription
		var seen [10]seqs
		for i := range seen {
			subs = append(subs, b.Subscribe(seen[i].observe, WithQueueSize(i)))
		}
		emitN(b, 20)
		for _, s := range subs {
			s.Unsubscribe()
			s.Unsubscribe() // idempotent
			<-s.Done()
		}
		emitN(b, 5) // nobody listens: must not block
		for i := range seen {
			if got := seen[i].list(); len(got) > 20 || !slices.Equal(got, seqRange(1, int64(len(got)))) {
				t.Errorf("observer %d saw %v: more than emitted before Unsubscribe, or out of order", i, got)
			}
		}
	})
}

// Close waits until a slow observer has seen every event emitted before it;
// subscribing to a closed bus yields a subscription that is already done.
func TestCloseWaitsForObservers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		o := newBlocked()
		b.Subscribe(o.observe, WithQueueSize(8))
		emitN(b, 3)
		closed := make(chan struct{})
		go func() { b.Close(); close(closed) }()
		again := make(chan struct{})
		go func() { b.Close(); close(again) }()
		synctest.Wait()
		if isClosed(closed) || isClosed(again) {
			t.Fatal("Close returned before the observer saw every event")
		}
		close(o.release)
		<-closed
		<-again
		if got := o.list(); !slices.Equal(got, seqRange(1, 3)) {
			t.Errorf("observer saw %v; want 1…3", got)
		}
		late := b.Subscribe(func(Event) { t.Error("observer added after Close ran") })
		<-late.Done()
		b.Emit(Event{Kind: Progress})
	})
}

// A sync observer has seen each event, in order, by the time Emit returns, and
// Emit waits for it.
func TestBusSubscribeSyncRunsInlineInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBus()
		var seen []int64
		b.SubscribeSync(func(e Event) { seen = append(seen, e.Seq) })
		var async seqs
		b.Subscribe(async.observe)
		for i := 1; i <= 100; i++ {
			e := b.Emit(Event{Kind: Progress})
			if len(seen) != i || seen[i-1] != e.Seq {
				t.Fatalf("after emit %d the sync observer saw %v", i, seen)
			}
		}
		release := make(chan struct{})
		b.SubscribeSync(func(Event) { <-release })
		returned := emitInBackground(b)
		if isClosed(returned) {
			t.Fatal("Emit returned before the sync observer finished")
		}
		close(release)
		<-returned
		b.Close()
		if n := len(async.list()); n != 101 || len(seen) != 101 {
			t.Fatalf("async saw %d, sync saw %d; want 101 each", n, len(seen))
		}
		b.SubscribeSync(func(Event) { t.Error("observer added after Close ran") })
		b.Emit(Event{Kind: Progress})
	})
}

// Events yields in order and unsubscribes when the loop breaks, when ctx
// ends (also if never ranged) and ends after the queue when the bus closes.
// An unbuffered Block queue left subscribed would make the later Emit calls
// wait forever, which synctest.Test reports.
func TestEventsIterator(t *testing.T) {
	t.Run("break unsubscribes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBus()
			seq := b.Events(t.Context(), WithQueueSize(0))
			go emitN(b, 10)
			var got []int64
			for e := range seq {
				got = append(got, e.Seq)
				if len(got) == 3 {
					break
				}
			}
			synctest.Wait() // the emitter finished: nothing waits for the loop
			if !slices.Equal(got, seqRange(1, 3)) || b.subscribers() != 0 {
				t.Errorf("got %v, %d subscriptions left; want 1…3, 0", got, b.subscribers())
			}
			for range seq {
				t.Error("a second range yielded an event")
			}
		})
	})
	t.Run("ctx end stops the loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBus()
			ctx, cancel := context.WithCancel(t.Context())
			ended := make(chan []int64)
			seq := b.Events(ctx)
			go func() {
				var got []int64
				for e := range seq {
					got = append(got, e.Seq)
				}
				ended <- got
			}()
			emitN(b, 2)
			synctest.Wait()
			cancel()
			if got := <-ended; !slices.Equal(got, seqRange(1, 2)) {
				t.Errorf("got %v; want 1…2", got)
			}
			emitN(b, 2)
		})
	})
	t.Run("never ranged, ctx ended", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := NewBus()
			ctx, cancel := context.WithCancel(t.Context())
			b.Events(ctx, WithQueueSize(0))
			cancel()
			synctest.Wait()
			emitN(b, 3)
			if b.subscribers() != 0 {
				t.Errorf("%d subscriptions left", b.subscribers())
			}
		})
	})
	t.Run("close ends after the queue", func(t *testing.T) {
		b := NewBus()
		seq := b.Events(t.Context(), WithQueueSize(2), WithPolicy(Drop))
		emitN(b, 5)
		b.Close()
		var got seqs
		for e := range seq {
			got.observe(e)
		}
		if !slices.Equal(got.list(), []int64{1, 2, -3}) {
			t.Errorf("got %v; want 1, 2 and a notice of 3 dropped", got.list())
		}
	})
}

// Emit fills Error from Err; JSON carries the message as "error" and not the
// error value, and errors.Is still works on the event in process.
func TestEmitCarriesErrAsValueAndText(t *testing.T) {
	sentinel := errors.New("agent: max turns reached")
	b := NewBus()
	var got Event
	b.SubscribeSync(func(e Event) { got = e })
	b.Emit(Event{Kind: AgentStopped, Err: fmt.Errorf("%w (3)", sentinel)})
	if !errors.Is(got.Err, sentinel) || got.Error != "agent: max turns reached (3)" {
		t.Fatalf("Err %v, Error %q", got.Err, got.Error)
	}
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["error"] != "agent: max turns reached (3)" || m["Err"] != nil || len(m) != 5 {
		t.Errorf("JSON %s; want kind, seq, time, correlation_id and error only", raw)
	}
}

func BenchmarkFanOut10(b *testing.B) {
	for _, p := range []Policy{Block, Drop} {
		b.Run(p.String(), func(b *testing.B) {
			bus := NewBus()
			var subs []*Subscription
			for range 10 {
				subs = append(subs, bus.Subscribe(func(Event) {}, WithPolicy(p)))
			}
			e := Event{Kind: MessageUpdate}
			b.ReportAllocs()
			for b.Loop() {
				bus.Emit(e)
			}
			bus.Close()
			var dropped int64
			for _, s := range subs {
				dropped += s.Dropped()
			}
			b.ReportMetric(float64(dropped)/float64(10*b.N), "dropped/delivery")
		})
	}
}
