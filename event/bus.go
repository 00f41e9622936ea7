package event

import (
	"slices"
	"sync"
	"time"
)

// Observer receives events. Added with Subscribe, it runs on its own
// goroutine, one event at a time, in emission order, fed from a bounded queue
// (see Policy for what happens when the queue is full). Added with
// SubscribeSync, it runs inline in Emit instead.
type Observer func(Event)

// Bus fans events out to observers. Emit stamps Seq and Time; every
// Subscribe observer has its own bounded queue (DefaultQueueSize events
// unless WithQueueSize says otherwise) and goroutine, so a slow observer only
// delays itself until its queue is full. Then its Policy decides: Block (the
// default) makes Emit wait, so no event is ever lost but an observer that
// stops returning stalls the agent loop; Drop makes Emit go on and the
// observer loses events, counted and reported to it as a Dropped event.
// SubscribeSync observers always run inline. Events (a pull iterator) uses
// the same queues.
//
// Emit calls are serialized: every observer sees events in Seq order. The
// zero Bus is not usable; call NewBus. Safe for concurrent use.
type Bus struct {
	// emitting is a one-slot semaphore held by Emit and Close while they
	// hand events to queues (Emit may wait there under Block). A channel
	// rather than a sync.Mutex so that a goroutine waiting for it is durably
	// blocked in the sense of testing/synctest.
	emitting chan struct{}

	mu       sync.Mutex // guards the fields below; never held while waiting
	seq      int64
	subs     []*Subscription // copy-on-write: Emit reads a snapshot
	syncs    []Observer
	closed   bool
	draining []*Subscription // push subscriptions Close waits for
	now      func() time.Time
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{emitting: make(chan struct{}, 1), now: time.Now} }

// SubscribeSync adds an observer that runs inline inside Emit, on the emitting
// goroutine, in emission order, and has returned before Emit returns. Unlike
// Subscribe it BLOCKS THE LOOP for as long as it runs (and other emitters
// wait too): use it only for durability-critical observers, such as a session
// recorder that must have written a step before the loop takes the next one.
// It must not call Emit or Close on the same bus (that deadlocks).
// Subscribing to a closed bus is a no-op.
func (b *Bus) SubscribeSync(o Observer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.syncs = append(b.syncs, o)
	}
}

// Emit stamps e with the next sequence number and the current time (unless
// Time is already set), sets e.Error to e.Err's message when Err is non-nil,
// queues e for every Subscribe observer and pull iterator and runs every
// SubscribeSync observer on it before returning. It returns the stamped event.
//
// Emit waits while a Block observer's queue is full (until that observer
// takes an event or is unsubscribed); it never waits for a Drop observer.
// Concurrent Emit calls run one at a time. A Subscribe observer must not
// call Emit on its own bus: with its queue full that waits for itself.
// Emitting on a closed bus is a no-op.
func (b *Bus) Emit(e Event) Event {
	b.emitting <- struct{}{}
	defer func() { <-b.emitting }()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return e
	}
	b.seq++
	e.Seq = b.seq
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	if e.Err != nil {
		e.Error = e.Err.Error()
	}
	subs, syncs := b.subs, b.syncs
	b.mu.Unlock()
	for _, s := range subs {
		s.offer(e)
	}
	for _, o := range syncs {
		o(e)
	}
	return e
}

// Close stops accepting events and waits until every Subscribe observer that
// is still subscribed has seen every event emitted before the call (Block),
// or every event that fitted its queue and a last Dropped event for the rest
// (Drop), and its goroutine has returned. Pull iterators (Events) are not
// waited for: they yield what is queued, then end. Close may be called more
// than once; every call waits. An observer must not call Close on its own
// bus (it would wait for itself); it may call Unsubscribe.
func (b *Bus) Close() {
	b.emitting <- struct{}{}
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		for _, s := range b.subs {
			close(s.queue) // no Emit is running, and none will send again
			if s.fin != nil {
				b.draining = append(b.draining, s)
			}
		}
		b.subs, b.syncs = nil, nil
	}
	wait := b.draining
	b.mu.Unlock()
	<-b.emitting
	for _, s := range wait {
		<-s.fin
	}
}

// add registers s unless the bus is closed; it reports whether it did.
func (b *Bus) add(s *Subscription) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.subs = append(b.subs, s)
	return true
}

// remove unregisters s (copy-on-write: a running Emit keeps its snapshot and
// sees s's stop channel instead).
func (b *Bus) remove(s *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.subs, s); i >= 0 {
		b.subs = slices.Delete(slices.Clone(b.subs), i, i+1)
	}
}
