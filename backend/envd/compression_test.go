package envd

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

type recordHeaders struct{ got http.Header }

func (r *recordHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req.Header.Clone()
	return nil, errors.New("recorded")
}

// A client of a daemon on this machine does not ask for gzipped answers
// (the daemon would spend CPU compressing every message for nothing); a
// client over the network does.
func TestClientAsksForGzipOnlyOverTheNetwork(t *testing.T) {
	for target, wantGzip := range map[string]bool{
		"http://127.0.0.1:49983":      false,
		"http://localhost:49983":      false,
		"http://[::1]:49983":          false,
		"unix:/run/sandbox.sock":      false,
		"http://10.1.2.3:49983":       true,
		"https://sandbox.example.com": true,
	} {
		rec := &recordHeaders{}
		c, err := Dial(target, WithHTTPClient(&http.Client{Transport: rec}))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Process.List(context.Background(), connect.NewRequest(&process.ListRequest{}))
		if rec.got == nil {
			t.Fatalf("%s: no request made", target)
		}
		if got := strings.Contains(rec.got.Get("Accept-Encoding"), "gzip"); got != wantGzip {
			t.Errorf("%s: Accept-Encoding %q, want gzip %v", target, rec.got.Get("Accept-Encoding"), wantGzip)
		}
	}
}
