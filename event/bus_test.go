package event

import (
	"sync/atomic"
	"testing"
	"time"
)

// A slow observer must not block Emit nor see events out of order, and Close
// must deliver everything emitted before it.
func TestBusSlowObserverKeepsOrderAndDoesNotBlock(t *testing.T) {
	b := NewBus()
	release := make(chan struct{})
	var slowSeen []int64
	b.Subscribe(func(e Event) {
		<-release
		slowSeen = append(slowSeen, e.Seq)
	})
	var fast atomic.Int64
	b.Subscribe(func(e Event) { fast.Add(1) })

	done := make(chan struct{})
	go func() {
		for i := 0; i < 1000; i++ {
			b.Emit(Event{Kind: Progress})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Emit blocked on a slow observer")
	}
	close(release)
	b.Close()
	if len(slowSeen) != 1000 || fast.Load() != 1000 {
		t.Fatalf("slow saw %d, fast saw %d; want 1000 each", len(slowSeen), fast.Load())
	}
	for i, s := range slowSeen {
		if s != int64(i+1) {
			t.Fatalf("event %d has seq %d: out of order", i, s)
		}
	}
	if e := b.Emit(Event{Kind: Progress}); e.Seq != 0 {
		t.Errorf("emit after close stamped seq %d", e.Seq)
	}
}

func BenchmarkFanOut10(b *testing.B) {
	bus := NewBus()
	for i := 0; i < 10; i++ {
		bus.Subscribe(func(Event) {})
	}
	e := Event{Kind: MessageUpdate}
	b.ReportAllocs()
	for b.Loop() {
		bus.Emit(e)
	}
	bus.Close()
}

// A sync observer has seen each event, in order, by the time Emit returns, and
// Emit waits for it.
func TestBusSubscribeSyncRunsInlineInOrder(t *testing.T) {
	b := NewBus()
	var seen []int64
	b.SubscribeSync(func(e Event) { seen = append(seen, e.Seq) })
	var async atomic.Int64
	b.Subscribe(func(Event) { async.Add(1) })
	for i := 1; i <= 100; i++ {
		e := b.Emit(Event{Kind: Progress})
		if len(seen) != i || seen[i-1] != e.Seq {
			t.Fatalf("after emit %d the sync observer saw %v", i, seen)
		}
	}
	release := make(chan struct{})
	b.SubscribeSync(func(Event) { <-release })
	returned := make(chan struct{})
	go func() { b.Emit(Event{Kind: Progress}); close(returned) }()
	select {
	case <-returned:
		t.Fatal("Emit returned before the sync observer finished")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-returned
	b.Close()
	if async.Load() != 101 || len(seen) != 101 {
		t.Fatalf("async saw %d, sync saw %d; want 101 each", async.Load(), len(seen))
	}
	b.SubscribeSync(func(Event) { t.Error("observer added after Close ran") })
	b.Emit(Event{Kind: Progress})
}
