package e2b

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Credentials never follow a redirect to another origin. Go's client drops
// Authorization and cookies only when the host name changes (not the port
// or the scheme) and forwards every custom header, X-API-Key and envd's
// X-Access-Token among them, to wherever a redirect points.

// credentialHeaders are the headers that carry a secret of the team or of
// a sandbox.
var credentialHeaders = []string{"X-API-Key", "Authorization", "X-Access-Token", "Proxy-Authorization", "Cookie"}

// maxRedirects is the standard client's limit, kept for callers that
// bring no redirect policy of their own.
const maxRedirects = 10

// guardRedirects returns a copy of hc whose redirects to another origin
// (scheme, host or port other than the first request's) carry no
// credential header. hc's own redirect policy still applies after that.
func guardRedirects(hc *http.Client) *http.Client {
	guarded := *hc
	own := hc.CheckRedirect
	guarded.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) {
			for _, h := range credentialHeaders {
				req.Header.Del(h)
			}
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &guarded
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// hostPort is the URL's host with the scheme's default port made explicit,
// so that https://h and https://h:443 are one origin.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return u.Host + ":80"
	case "https":
		return u.Host + ":443"
	}
	return u.Host
}
