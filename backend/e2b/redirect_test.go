package e2b

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// credentialSeen records the credential headers each request brought.
type credentialSeen struct {
	mu   sync.Mutex
	seen []string // "X-API-Key=…", one entry per credential header present
	hits int
}

func (c *credentialSeen) note(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits++
	for _, h := range []string{"X-API-Key", "Authorization", "X-Access-Token"} {
		if v := r.Header.Get(h); v != "" {
			c.seen = append(c.seen, h+"="+v)
		}
	}
}

func (c *credentialSeen) get() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, append([]string(nil), c.seen...)
}

// twoHosts is a control plane (first) that redirects every request to
// another host (second, a loopback server on another port).
func twoHosts(t *testing.T) (first, second *httptest.Server, atFirst, atSecond *credentialSeen) {
	atFirst, atSecond = &credentialSeen{}, &credentialSeen{}
	second = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atSecond.note(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	t.Cleanup(second.Close)
	first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atFirst.note(r)
		http.Redirect(w, r, second.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)
	return first, second, atFirst, atSecond
}

// TestE2BRedirectToAnotherHostDropsTheKey: a control plane (or anything on
// the way to it) that redirects to another host must not receive the API
// key there, nor envd's access token on a health check.
func TestE2BRedirectToAnotherHostDropsTheKey(t *testing.T) {
	for _, custom := range []bool{false, true} {
		first, _, atFirst, atSecond := twoHosts(t)
		cfg := Config{APIKey: testKey, APIURL: first.URL}
		if custom {
			// A caller's own client, with its own redirect policy, is
			// protected as well.
			cfg.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
		}
		c, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.List(ctxT(t), ListOptions{}); err != nil {
			t.Fatalf("custom client %v: list through the redirect: %v", custom, err)
		}
		// envd's health check carries X-Access-Token through the same client.
		_, _ = c.Probe(ctxT(t), Connection{SandboxID: "sbx1", EnvdURL: first.URL, AccessToken: "envd-secret"})

		if n, seen := atFirst.get(); n < 2 || len(seen) == 0 || !strings.Contains(strings.Join(seen, " "), "X-API-Key="+testKey) {
			t.Fatalf("custom client %v: the control plane itself saw %d requests, credentials %q", custom, n, seen)
		}
		n, seen := atSecond.get()
		if n < 2 {
			t.Fatalf("custom client %v: the redirect was not followed (%d requests at the other host)", custom, n)
		}
		if len(seen) != 0 {
			t.Fatalf("custom client %v: the other host received credentials: %q", custom, seen)
		}
	}
}

// TestE2BRedirectOnTheSameHostKeepsTheKey: a redirect within the control
// plane's own origin still authenticates.
func TestE2BRedirectOnTheSameHostKeepsTheKey(t *testing.T) {
	seen := &credentialSeen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/sandboxes" {
			http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		seen.note(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(Config{APIKey: testKey, APIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(ctxT(t), ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, got := seen.get(); n != 1 || len(got) != 1 || got[0] != "X-API-Key="+testKey {
		t.Fatalf("after a same-origin redirect: %d requests, credentials %q", n, got)
	}
}
