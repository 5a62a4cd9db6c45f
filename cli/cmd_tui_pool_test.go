package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"sandtop/backend/target"
	"sandtop/testwait"
)

// The pool never holds more than its bound: a new sandbox evicts the
// least recently used idle session, a pinned or borrowed one is never
// evicted, and with every slot busy the caller is told to come back.
func TestEnvdPoolBoundsAndEvicts(t *testing.T) {
	p := newEnvdPool(2, time.Hour)
	defer p.closeAll()
	dials := map[string]int{}
	dial := func(key string) func(context.Context) (*target.Connection, error) {
		return func(context.Context) (*target.Connection, error) {
			dials[key]++
			return &target.Connection{}, nil
		}
	}
	ctx := context.Background()
	get := func(key string, pin bool) (func(bool), error) {
		_, release, err := p.acquire(ctx, key, pin, dial(key))
		return release, err
	}
	relA, err := get("a", true) // pinned: the sandbox on screen
	if err != nil {
		t.Fatal(err)
	}
	relA(false)
	relB, _ := get("b", false)
	relB(false)
	relC, err := get("c", false) // evicts b, the idle one, not the pinned a
	if err != nil || p.open() != 2 {
		t.Fatalf("c: %v, %d open", err, p.open())
	}
	if _, err := get("b", false); !errors.Is(err, errPoolFull) {
		t.Fatalf("b while a is pinned and c borrowed: %v; want the pool full", err)
	}
	relC(false)
	relB, err = get("b", false)
	if err != nil || dials["b"] != 2 || dials["a"] != 1 {
		t.Fatalf("b again: %v, dials %v", err, dials)
	}
	relB(true) // broken: closed at once
	if p.open() != 1 {
		t.Fatalf("%d open after a broken release; want the pinned one only", p.open())
	}
	for i := range 5 {
		rel, err := get(fmt.Sprint("x", i), false)
		if err != nil {
			t.Fatal(err)
		}
		rel(false)
		if p.open() > 2 {
			t.Fatalf("%d open; the bound is 2", p.open())
		}
	}
}

// Idle sessions are closed by the reaper without anyone asking.
func TestEnvdPoolClosesIdle(t *testing.T) {
	p := newEnvdPool(4, 50*time.Millisecond)
	defer p.closeAll()
	_, rel, err := p.acquire(context.Background(), "a", false, func(context.Context) (*target.Connection, error) { return &target.Connection{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	rel(false)
	testwait.For(t, 5*time.Second, "the idle session to close", func() bool { return p.open() == 0 })
}
