package e2bfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func get(t *testing.T, f *Fake, path string) (*http.Response, []listed) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", f.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page []listed
	if resp.StatusCode == http.StatusOK && req.URL.Path == "/v2/sandboxes" {
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp, page
}

// TestFakeListsAThousandInPagesOf100: every sandbox once, in id order, ten
// pages of at most 100, the last one without a next token; the metadata
// and state filters apply across pages.
func TestFakeListsAThousandInPagesOf100(t *testing.T) {
	f := New(t, "k")
	for i := range 1000 {
		sb := Sandbox{ID: fmt.Sprintf("sbx%04d", 999-i), Metadata: map[string]string{"half": fmt.Sprint(i % 2)}}
		if i%10 == 0 {
			sb.State = "paused"
		}
		f.Add(sb)
	}
	walk := func(query string) (ids []string, pages int) {
		next := ""
		for {
			q, _ := url.ParseQuery(query)
			if next != "" {
				q.Set("nextToken", next)
			}
			resp, page := get(t, f, "/v2/sandboxes?"+q.Encode())
			if resp.StatusCode != http.StatusOK || len(page) > 100 {
				t.Fatalf("%s: status %d, %d entries", query, resp.StatusCode, len(page))
			}
			pages++
			for _, sb := range page {
				ids = append(ids, sb.SandboxID)
			}
			if next = resp.Header.Get("X-Next-Token"); next == "" {
				return ids, pages
			}
		}
	}
	ids, pages := walk("limit=100")
	if len(ids) != 1000 || pages != 10 {
		t.Fatalf("%d sandboxes in %d pages", len(ids), pages)
	}
	for i, id := range ids {
		if want := fmt.Sprintf("sbx%04d", i); id != want {
			t.Fatalf("entry %d is %s, want %s", i, id, want)
		}
	}
	if ids, _ := walk("state=paused&metadata=" + url.QueryEscape("half=0")); len(ids) != 100 {
		t.Fatalf("paused with half=0: %d, want 100", len(ids))
	}
	if ids, pages := walk("state=running&metadata=" + url.QueryEscape("half=1")); len(ids) != 500 || pages != 5 {
		t.Fatalf("running with half=1: %d in %d pages, want 500 in 5", len(ids), pages)
	}
	if got := f.Counts()["GET /v2/sandboxes"]; got != 10+1+5 || f.Total() != got {
		t.Fatalf("counted %d listings, %d in all; want 16", got, f.Total())
	}
}

// TestFakeRefusesOnDemand: FailNext refuses exactly the next n requests,
// a 429 with Retry-After, then serves again; refusals are counted.
func TestFakeRefusesOnDemand(t *testing.T) {
	f := New(t, "k")
	f.Add(Sandbox{ID: "sbx1"})
	f.FailNext(2, http.StatusTooManyRequests, 1500*time.Millisecond)
	for i := range 2 {
		resp, _ := get(t, f, "/sandboxes/sbx1")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
			t.Fatalf("request %d: %d, Retry-After %q", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if resp, _ := get(t, f, "/sandboxes/sbx1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the refusals: %d", resp.StatusCode)
	}
	f.FailNext(1, http.StatusServiceUnavailable, 0)
	if resp, _ := get(t, f, "/v2/sandboxes"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("503 asked for, got %d", resp.StatusCode)
	}
	log := f.Log()
	if f.Calls("GET /sandboxes/{id}") != 3 || len(log) != 4 || log[0].Refused != 429 || log[2].Refused != 0 || log[3].Refused != 503 {
		t.Fatalf("calls %v, log %+v", f.Counts(), log)
	}
	f.KeepLog(false)
	get(t, f, "/v2/sandboxes")
	if len(f.Log()) != 0 || f.Total() != 5 {
		t.Fatalf("without a log: %d logged, %d counted", len(f.Log()), f.Total())
	}
}
