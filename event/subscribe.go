package event

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueueSize is the capacity, in events, of an observer's queue when
// no WithQueueSize option is given: 1024 events, a long streamed answer
// (one MessageUpdate per delta) for an observer that falls behind. A queue
// slot is 256 bytes (the Event struct; what its pointers reference is
// shared, not copied), and the whole queue is allocated when subscribing:
// 256 KiB at the default size.
const DefaultQueueSize = 1024

// Policy says what Emit does when a Subscribe observer's (or an Events
// iterator's) queue is full.
type Policy int

const (
	// Block, the default, makes Emit wait until the observer has taken an
	// event from its full queue: nothing is lost, and a slow observer slows
	// the loop to its own pace. An observer that stops returning stalls Emit
	// — and with it the agent loop and every other emitter on the bus —
	// until it returns or its Subscription is unsubscribed.
	Block Policy = iota
	// Drop makes Emit never wait for this observer: an event that does not
	// fit its queue is dropped for this observer alone and counted
	// (Subscription.Dropped). Before the observer's next delivered event —
	// or last, when the bus closes — it receives one Dropped event whose
	// DroppedCount is how many it lost since the previous one. Use it for
	// observers that can live with gaps (a live display, metrics).
	Drop
)

// String returns "block" or "drop".
func (p Policy) String() string {
	switch p {
	case Block:
		return "block"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// SubscribeOption configures one Subscribe or Events call.
type SubscribeOption func(*subConfig)

type subConfig struct {
	size   int
	policy Policy
}

// WithQueueSize sets the observer's queue capacity to n events (default
// DefaultQueueSize). n ≤ 0 means no queue: each event is handed over only
// when the observer is ready for it (Block waits for that; Drop drops the
// event unless the observer is idle).
func WithQueueSize(n int) SubscribeOption {
	return func(c *subConfig) { c.size = max(n, 0) }
}

// WithPolicy sets what Emit does when the observer's queue is full: Block
// (the default) or Drop. Any other value is treated as Block, which loses
// nothing.
func WithPolicy(p Policy) SubscribeOption {
	return func(c *subConfig) {
		if p == Drop {
			c.policy = Drop
		} else {
			c.policy = Block
		}
	}
}

// Subscription is one Subscribe observer's registration on a Bus: its
// bounded queue, policy and drop count. Its methods are safe for concurrent
// use, also from inside the observer.
type Subscription struct {
	bus    *Bus
	queue  chan queued // closed by Bus.Close
	policy Policy
	size   int

	stop     chan struct{} // closed by Unsubscribe
	stopOnce sync.Once
	fin      chan struct{} // push form: closed when the goroutine returns

	dropped atomic.Int64
	// pending, pendingFrom and pendingAt describe the events dropped since
	// the last Dropped notice (a run of consecutive Seq). Written only by
	// Emit (serialized by Bus.emitting); read by the consumer after Close
	// closed the queue.
	pending     int64
	pendingFrom int64
	pendingAt   time.Time
}

// queued is one queue slot: an event and the Dropped notice due before it.
type queued struct {
	e      Event
	notice *Event
}

// Subscribe adds an observer that sees every event emitted after the call,
// on its own goroutine, one at a time, in emission order, through a queue of
// DefaultQueueSize events with the Block policy unless opts say otherwise
// (see Policy). It returns the subscription, which callers may ignore.
// The observer may call Unsubscribe; it must not call Close on the bus
// (Close waits for it) nor, with Block, Emit (it may wait for its own full
// queue). Subscribing to a closed bus returns a subscription that is
// already unsubscribed; the observer never runs.
func (b *Bus) Subscribe(o Observer, opts ...SubscribeOption) *Subscription {
	s := b.newSubscription(opts)
	s.fin = make(chan struct{})
	if !b.add(s) {
		s.Unsubscribe()
		close(s.fin)
		return s
	}
	go s.run(o)
	return s
}

// Events returns an iterator over the events emitted after the call, for a
// `for e := range bus.Events(ctx)` loop: the same queue and policy as
// Subscribe (opts), but the loop body runs on the ranging goroutine. The
// loop ends when its body breaks or returns (the queue is then
// unsubscribed), when ctx is done, or when the bus is closed and the queued
// events (and a last Dropped notice, with Drop) have been yielded; Close does
// not wait for it. The subscription starts when Events is called, so nothing
// emitted between the call and the range is missed; it also ends when ctx
// is done if the iterator is never ranged — until then a Block queue that is
// not drained stalls Emit once full. With Block the loop body must not Emit
// on the same bus. The iterator can be ranged once; later ranges yield
// nothing.
func (b *Bus) Events(ctx context.Context, opts ...SubscribeOption) iter.Seq[Event] {
	s := b.newSubscription(opts)
	if !b.add(s) {
		s.Unsubscribe()
	}
	stopAfter := context.AfterFunc(ctx, s.Unsubscribe)
	var ranged atomic.Bool
	return func(yield func(Event) bool) {
		if !ranged.CompareAndSwap(false, true) {
			return
		}
		defer stopAfter()
		defer s.Unsubscribe()
		s.consume(func(e Event) bool { return ctx.Err() == nil && yield(e) })
	}
}

func (b *Bus) newSubscription(opts []SubscribeOption) *Subscription {
	c := subConfig{size: DefaultQueueSize, policy: Block}
	for _, o := range opts {
		o(&c)
	}
	return &Subscription{bus: b, queue: make(chan queued, c.size), policy: c.policy, size: c.size, stop: make(chan struct{})}
}

// Unsubscribe stops delivery: the observer is not called with any event it
// has not started on (queued events are discarded), a blocked Emit waiting
// for its queue goes on, and its goroutine returns once the call in progress
// (if any) does — see Done. It does not close the bus. It may be called from
// inside the observer, more than once, and after Close.
func (s *Subscription) Unsubscribe() {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.bus.remove(s)
	})
}

// Done is closed when a Subscribe observer will not be called again: its
// goroutine has returned, after Unsubscribe or after Bus.Close delivered its
// queue. For a subscription of a closed bus it is closed already.
func (s *Subscription) Done() <-chan struct{} { return s.fin }

// Dropped returns how many events were dropped for this observer because its
// queue was full (Drop policy; always 0 with Block).
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Policy returns the subscription's policy.
func (s *Subscription) Policy() Policy { return s.policy }

// QueueSize returns the capacity of the subscription's queue, in events.
func (s *Subscription) QueueSize() int { return s.size }

func (s *Subscription) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// offer queues e according to the policy. Emit calls it, one call at a time.
func (s *Subscription) offer(e Event) {
	if s.stopped() {
		return
	}
	q := queued{e: e}
	if s.policy == Block {
		select {
		case s.queue <- q:
		case <-s.stop:
		}
		return
	}
	if s.pending > 0 {
		if s.size > 0 && len(s.queue) == s.size {
			s.drop(e) // still full: skip building a notice
			return
		}
		q.notice = s.notice()
	}
	select {
	case s.queue <- q:
		s.pending = 0
	default:
		s.drop(e)
	}
}

// drop counts e as lost for this observer (Drop policy).
func (s *Subscription) drop(e Event) {
	if s.pending == 0 {
		s.pendingFrom, s.pendingAt = e.Seq, e.Time
	}
	s.pending++
	s.dropped.Add(1)
}

// notice is the Dropped event for the pending run of dropped events.
func (s *Subscription) notice() *Event {
	last := s.pendingFrom + s.pending - 1
	return &Event{Kind: Dropped, Time: s.pendingAt, DroppedCount: s.pending,
		Text: fmt.Sprintf("%d event(s) dropped (seq %d–%d): observer queue full (%d events, policy drop)", s.pending, s.pendingFrom, last, s.size)}
}

func (s *Subscription) run(o Observer) {
	defer close(s.fin)
	s.consume(func(e Event) bool { o(e); return true })
}

// consume hands queued events, each preceded by its Dropped notice if any,
// to deliver until deliver returns false, the subscription is unsubscribed,
// or the bus closed and the queue is empty (then a last notice for events
// dropped since the previous one is delivered).
func (s *Subscription) consume(deliver func(Event) bool) {
	for {
		select {
		case <-s.stop:
			return
		case q, ok := <-s.queue:
			if !ok {
				if s.pending > 0 && !s.stopped() {
					deliver(*s.notice())
				}
				return
			}
			if s.stopped() {
				return
			}
			if q.notice != nil && (!deliver(*q.notice) || s.stopped()) {
				return
			}
			if !deliver(q.e) {
				return
			}
		}
	}
}
