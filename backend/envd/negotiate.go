package envd

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// An http:// endpoint may speak h2c (sandtop's daemon) or only HTTP/1.1
// (stock envd, where an h2c preface is answered with an HTTP/1.1 error
// that the HTTP/2 client reads as "frame too large"). A negotiator finds
// out once per endpoint, with a GET /health over h2c before the first real
// request, and remembers the answer: Connect's streaming requests cannot be
// replayed over another protocol once sent.

// probeTimeout bounds the h2c probe; a live h2c server answers at once.
const probeTimeout = 5 * time.Second

type negotiator struct {
	h2c, http1 http.RoundTripper

	mu     sync.Mutex
	chosen http.RoundTripper // nil until a probe got an HTTP answer
}

// newNegotiator builds the two transports from mk (plainTransport).
func newNegotiator(mk func(http1 bool) *http.Transport) *negotiator {
	return &negotiator{h2c: mk(false), http1: mk(true)}
}

func (n *negotiator) RoundTrip(r *http.Request) (*http.Response, error) {
	rt, err := n.pick(r)
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(r)
}

// pick returns the remembered transport, or probes for it. When neither
// protocol gets an answer (the endpoint is down) nothing is remembered and
// the request goes out over HTTP/1.1, which then reports the real error.
func (n *negotiator) pick(r *http.Request) (http.RoundTripper, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.chosen != nil {
		return n.chosen, nil
	}
	for _, rt := range []http.RoundTripper{n.h2c, n.http1} {
		if n.answers(r, rt) {
			n.chosen = rt
			return rt, nil
		}
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
	}
	return n.http1, nil
}

// answers reports whether rt gets any HTTP response (whatever its status)
// from the endpoint's /health.
func (n *negotiator) answers(r *http.Request, rt http.RoundTripper) bool {
	ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
	defer cancel()
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = "/health", "", ""
	probe, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false
	}
	probe.Host = r.Host
	for k, v := range r.Header { // routing headers and the token, not the body's
		if k != "Content-Type" && k != "Content-Length" && k != "Content-Encoding" {
			probe.Header[k] = v
		}
	}
	res, err := rt.RoundTrip(probe)
	if err != nil {
		return false
	}
	res.Body.Close()
	return true
}

// CloseIdleConnections closes both transports' idle connections.
func (n *negotiator) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{n.h2c, n.http1} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// NegotiatingTransport is the transport Dial uses for http:// endpoints
// when no protocol is forced: h2c where the endpoint speaks it, else
// HTTP/1.1, decided by the first request and remembered. Callers that add
// their own round tripper on top (routing headers) use it underneath.
func NegotiatingTransport() http.RoundTripper { return newNegotiator(plainTransport) }
