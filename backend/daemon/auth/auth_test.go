package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"sandtop/backend/daemon/auth"
)

func TestCheckToken(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
		ok     bool
	}{
		{"right", []string{"tok"}, true},
		{"wrong", []string{"guess"}, false},
		{"prefix", []string{"to"}, false},
		{"twice", []string{"tok", "tok"}, false},
	} {
		h := http.Header{auth.TokenHeader: c.values}
		if err := auth.CheckToken(h, "tok"); (err == nil) != c.ok || errors.Is(err, auth.ErrNoToken) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for _, h := range []http.Header{{}, {auth.TokenHeader: {""}}} {
		if err := auth.CheckToken(h, "tok"); !errors.Is(err, auth.ErrNoToken) {
			t.Errorf("%v: want ErrNoToken, got %v", h, err)
		}
	}
}

// A signed URL is good for its own path, operation and user, until it
// expires.
func TestCheckFileSignature(t *testing.T) {
	signed := func(method, path, op, user string, exp *int64) *http.Request {
		q := url.Values{"path": {path}, "username": {user}, "signature": {auth.FileSignature(path, op, user, "tok", exp)}}
		if exp != nil {
			q.Set("signature_expiration", strconv.FormatInt(*exp, 10))
		}
		return httptest.NewRequest(method, "/files?"+q.Encode(), nil)
	}
	later, earlier := time.Now().Add(time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	for _, c := range []struct {
		name string
		r    *http.Request
		want string // "" passes
	}{
		{"read", signed(http.MethodGet, "/a", "read", "user", nil), ""},
		{"write", signed(http.MethodPost, "/a", "write", "user", nil), ""},
		{"read signature for a write", signed(http.MethodPost, "/a", "read", "user", nil), "invalid signature"},
		{"not yet expired", signed(http.MethodGet, "/a", "read", "", &later), ""},
		{"expired", signed(http.MethodGet, "/a", "read", "", &earlier), "signature is already expired"},
		{"unsigned", httptest.NewRequest(http.MethodGet, "/files?path=/a", nil), "missing signature query parameter"},
	} {
		got := ""
		if err := auth.CheckFileSignature(c.r, "tok"); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	other := signed(http.MethodGet, "/a", "read", "user", nil)
	q := other.URL.Query()
	q.Set("path", "/b")
	other.URL.RawQuery = q.Encode()
	if err := auth.CheckFileSignature(other, "tok"); err == nil {
		t.Errorf("a signature for /a passed for /b")
	}
}

func TestParseBasicUser(t *testing.T) {
	if name, err := auth.ParseBasicUser("Basic cm9vdDo="); err != nil || name != "root" {
		t.Errorf("root: %q, %v", name, err)
	}
	for _, h := range []string{"Bearer x", "Basic !!!", "Basic cm9vdA=="} {
		if name, err := auth.ParseBasicUser(h); err == nil {
			t.Errorf("%q gave %q", h, name)
		}
	}
}
