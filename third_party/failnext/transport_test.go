package failnext

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// idleCloser is a Base that counts CloseIdleConnections calls.
type idleCloser struct {
	roundTripFunc
	calls atomic.Int32
}

func (c *idleCloser) CloseIdleConnections() { c.calls.Add(1) }

func TestCloseIdleConnections(t *testing.T) {
	t.Run("it is forwarded to a Base that has the method", func(t *testing.T) {
		base := &idleCloser{}
		tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: base})
		tr.CloseIdleConnections()
		if n := base.calls.Load(); n != 1 {
			t.Errorf("Base got %d calls, want 1", n)
		}
	})
	t.Run("with a nil Base it reaches the default transport captured by New", func(t *testing.T) {
		orig := http.DefaultTransport
		captured := &idleCloser{}
		http.DefaultTransport = captured
		tr, err := New(Config{Endpoints: endpoints("a")})
		http.DefaultTransport = orig
		if err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
		if n := captured.calls.Load(); n != 1 {
			t.Errorf("the captured default transport got %d calls, want 1", n)
		}
	})
	t.Run("a Base without the method is left alone", func(t *testing.T) {
		tr, _ := build(t, Config{Endpoints: endpoints("a"), Base: roundTripFunc(nil)})
		tr.CloseIdleConnections() // must not panic
	})
	t.Run("a nil Transport does nothing", func(t *testing.T) {
		var tr *Transport
		tr.CloseIdleConnections() // must not panic
	})
	t.Run("a zero-value Transport does nothing", func(t *testing.T) {
		(&Transport{}).CloseIdleConnections() // must not panic
	})
}
