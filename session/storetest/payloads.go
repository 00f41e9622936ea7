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
// ones included; a second put of the same key is harmless; a key that is
// not the data's hash is refused and stores nothing; an unknown key gives
// ErrNotFound naming it; the returned bytes are the caller's.

func testPayloadsAreContentAddressed(t *testing.T, be Backend, s session.Store) {
	ctx := t.Context()
	p := s.(session.Payloads)
	big := make([]byte, 3<<20) // over Temporal's 2 MB payload cap, incompressible
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	small := []byte("{\"a\":\x00\xff}")
	for _, d := range [][]byte{big, small, {}} {
		if err := p.PutPayload(ctx, session.PayloadKey(d), d); err != nil {
			t.Fatalf("put %d bytes: %v", len(d), err)
		}
	}
	if err := p.PutPayload(ctx, session.PayloadKey(small), small); err != nil {
		t.Errorf("a second put of the same payload: %v", err)
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
	if err := p.PutPayload(ctx, wrong, small); err == nil || !strings.Contains(err.Error(), wrong) {
		t.Errorf("put under a key that is not the data's SHA-256: %v; want an error naming it", err)
	}
	if _, err := p.Payload(ctx, wrong); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), wrong) {
		t.Errorf("payload under a refused key: %v; want ErrNotFound naming the key", err)
	}
}
