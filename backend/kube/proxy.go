package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// proxyErrors turns the API server's own refusals of a pod-proxy request
// (a Status document: RBAC's 403, a pod that is gone, a daemon the API
// server cannot dial) into one readable error naming what is missing,
// instead of a Connect error about an unexpected HTTP status. Answers
// from the daemon pass through untouched: it never sends a Status.
type proxyErrors struct{ next http.RoundTripper }

// statusPeek bounds how much of an error body is read to recognise it.
const statusPeek = 64 << 10

// apiStatus is the part of the API server's Status document read here.
type apiStatus struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
}

func (p *proxyErrors) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := p.next.RoundTrip(r)
	if err != nil || res.StatusCode < 400 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		return res, err
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, statusPeek))
	res.Body.Close()
	var st apiStatus
	if rerr == nil && json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return nil, proxyRefusal(r, res.StatusCode, st)
	}
	// Not the API server's: hand the daemon's answer on as it came.
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// CloseIdleConnections reaches the API server's transport.
func (p *proxyErrors) CloseIdleConnections() {
	if c, ok := p.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// proxyRefusal says what the API server refused and what would help.
func proxyRefusal(r *http.Request, code int, st apiStatus) error {
	pod := podOfProxyPath(r.URL.Path)
	msg := strings.TrimSpace(st.Message)
	switch code {
	case http.StatusForbidden:
		return fmt.Errorf("kube: the API server refused the pod proxy to %s: %s (RBAC: the user needs get and create on pods/proxy; Connect calls are POSTs)", pod, msg)
	case http.StatusUnauthorized:
		return fmt.Errorf("kube: the API server did not accept the kubeconfig's credentials for %s: %s", pod, msg)
	case http.StatusNotFound:
		return fmt.Errorf("kube: pod %s: %w: %s", pod, ErrPodGone, msg)
	}
	return fmt.Errorf("kube: the API server could not proxy to %s (HTTP %d %s): %s", pod, code, st.Reason, msg)
}

// podOfProxyPath is NAMESPACE/POD of /api/v1/namespaces/NS/pods/NAME:PORT/proxy/…
func podOfProxyPath(path string) string {
	parts := strings.Split(path, "/")
	for i := 0; i+3 < len(parts); i++ {
		if parts[i] == "namespaces" && parts[i+2] == "pods" {
			name := parts[i+3]
			name = strings.TrimPrefix(strings.TrimPrefix(name, "https:"), "http:")
			if j := strings.IndexByte(name, ':'); j >= 0 {
				name = name[:j]
			}
			return parts[i+1] + "/" + name
		}
	}
	return "the pod"
}
