package storetest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/strata-agent/strata/session"
)

// A payload (session.Payloads) is stored under its SHA-256: another handle
// on the store (another worker) reads the same bytes back, binary and 3 MB
// ones included, whether stored for a session, for none or for one the
// store does not know; a second put of the same key (for the same or
// another session) is harmless; a key that is not the data's hash is
// refused and stores nothing; an unknown key gives ErrNotFound naming it;
// the returned bytes are the caller's.

func testPayloadsAreContentAddressed(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	p := s.(session.Payloads)
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 3<<20) // over Temporal's 2 MB payload cap, incompressible
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	small := []byte("{\"a\":\x00\xff}")
	for i, d := range [][]byte{big, small, {}} {
		if err := p.PutPayload(ctx, []string{"s1", "", "nosuch"}[i], session.PayloadKey(d), d); err != nil {
			t.Fatalf("put %d bytes: %v", len(d), err)
		}
	}
	for _, sid := range []string{"s1", "s2"} {
		if err := p.PutPayload(ctx, sid, session.PayloadKey(small), small); err != nil {
			t.Errorf("a second put of the same payload for %s: %v", sid, err)
		}
	}
	other, ok := be.second(t, s).(session.Payloads)
	if !ok {
		t.Fatalf("%s: the second handle on the store is not a session.Payloads", be.Name)
	}
	for _, d := range [][]byte{big, small, {}} {
		got, err := other.Payload(ctx, session.PayloadKey(d))
		if err != nil || !bytes.Equal(got, d) {
			t.Errorf("payload of %d bytes read back as %d bytes, %v", len(d), len(got), err)
		}
	}
	got, _ := p.Payload(ctx, session.PayloadKey(small))
	got[0] = 'X'
	if again, _ := p.Payload(ctx, session.PayloadKey(small)); !bytes.Equal(again, small) {
		t.Errorf("changing the returned bytes changed the store: %q", again)
	}
	wrong := session.PayloadKey([]byte("something else"))
	if err := p.PutPayload(ctx, "s1", wrong, small); err == nil || !strings.Contains(err.Error(), wrong) {
		t.Errorf("put under a key that is not the data's SHA-256: %v; want an error naming it", err)
	}
	if _, err := p.Payload(ctx, wrong); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), wrong) {
		t.Errorf("payload under a refused key: %v; want ErrNotFound naming the key", err)
	}
}

// PayloadsFollowTheirSessions checks the garbage collection of a store
// whose sessions can be deleted (deleteSession deletes session id's row as
// an operator would, with SQL): a payload stored for a session goes with
// it, one another session also stored stays until that one goes too, and
// one stored for no session stays. Memory stores delete no session and
// skip it.
func PayloadsFollowTheirSessions(t *testing.T, s session.Store, deleteSession func(id string) error) {
	t.Helper()
	ctx := t.Context()
	p, ok := s.(session.Payloads)
	if !ok {
		t.Fatal("the store is not a session.Payloads")
	}
	for _, id := range []string{"s1", "s2"} {
		if _, err := s.CreateSession(ctx, session.SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	own, shared, none := []byte("only s1's request"), []byte("a tool result both sessions read"), []byte("a payload of no session")
	for _, c := range []struct {
		sid  string
		data []byte
	}{{"s1", own}, {"s1", shared}, {"s2", shared}, {"", none}} {
		if err := p.PutPayload(ctx, c.sid, session.PayloadKey(c.data), c.data); err != nil {
			t.Fatal(err)
		}
	}
	has := func(d []byte) bool {
		_, err := p.Payload(ctx, session.PayloadKey(d))
		if err != nil && !errors.Is(err, session.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	if err := deleteSession("s1"); err != nil {
		t.Fatal(err)
	}
	if has(own) || !has(shared) || !has(none) {
		t.Errorf("after deleting s1: its own payload kept %v, the shared one %v, the sessionless one %v; want false, true, true", has(own), has(shared), has(none))
	}
	if err := deleteSession("s2"); err != nil {
		t.Fatal(err)
	}
	if has(shared) || !has(none) {
		t.Errorf("after deleting s2: the shared payload kept %v, the sessionless one %v; want false, true", has(shared), has(none))
	}
}
