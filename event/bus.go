package event

import (
	"sync"
	"time"
)

// Observer receives events. Added with Subscribe, it runs on its own
// goroutine, one event at a time, in emission order; it may be slow without
// slowing or reordering the loop. Added with SubscribeSync, it runs inline in
// Emit instead.
type Observer func(Event)

// Bus fans events out to observers. Emit stamps Seq and Time and never blocks
// on a Subscribe observer: each has its own unbounded queue and goroutine, so
// a slow observer only delays itself (SubscribeSync observers are the
// deliberate exception). No event is dropped. The zero Bus is not
// usable; call NewBus. Safe for concurrent use.
type Bus struct {
	mu     sync.Mutex
	seq    int64
	subs   []*subscriber
	syncs  []Observer
	closed bool
	now    func() time.Time
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{now: time.Now} }

type subscriber struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue []Event
	done  bool
	fin   chan struct{}
}

// Subscribe adds an observer that sees every event emitted after the call.
// Subscribing to a closed bus is a no-op.
func (b *Bus) Subscribe(o Observer) {
	s := &subscriber{fin: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	go s.run(o)
}

func (s *subscriber) run(o Observer) {
	defer close(s.fin)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.done {
			s.cond.Wait()
		}
		if len(s.queue) == 0 && s.done {
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, e := range batch {
			o(e)
		}
	}
}

// SubscribeSync adds an observer that runs inline inside Emit, on the emitting
// goroutine, in emission order, and has returned before Emit returns. Unlike
// Subscribe it BLOCKS THE LOOP for as long as it runs (and holds the bus lock,
// so other emitters wait too): use it only for durability-critical observers,
// such as a session recorder that must have written a step before the loop
// takes the next one. It must not call Emit, Subscribe, SubscribeSync or Close
// on the same bus (that deadlocks). Subscribing to a closed bus is a no-op.
func (b *Bus) SubscribeSync(o Observer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.syncs = append(b.syncs, o)
	}
}

// Emit stamps e with the next sequence number and the current time (unless
// Time is already set), queues it for every Subscribe observer and runs every
// SubscribeSync observer on it before returning. It returns the stamped event.
// Emitting on a closed bus is a no-op.
func (b *Bus) Emit(e Event) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return e
	}
	b.seq++
	e.Seq = b.seq
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	for _, s := range b.subs {
		s.mu.Lock()
		s.queue = append(s.queue, e)
		s.cond.Signal()
		s.mu.Unlock()
	}
	for _, o := range b.syncs {
		o(e)
	}
	return e
}

// Close stops accepting events and waits until every observer has seen every
// event emitted before the call.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	subs := b.subs
	b.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		s.done = true
		s.cond.Signal()
		s.mu.Unlock()
		<-s.fin
	}
}
