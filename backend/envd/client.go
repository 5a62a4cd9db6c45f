// Package envd is the Connect client for envd's process.Process service and
// sandtop's Supervisor extension, over h2c, HTTP/1.1, a unix socket or TLS.
package envd

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"connectrpc.com/connect"

	"sandtop/backend/gen/filesystem/filesystemconnect"
	"sandtop/backend/gen/process/processconnect"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/backend/rawsock"
)

// Client talks to one envd-compatible daemon.
type Client struct {
	Process    processconnect.ProcessClient
	Supervisor sandtopv1connect.SupervisorClient
	Target     string

	// filesystem is built on first use: building a Connect client
	// initialises its service's descriptors, a cost on every CLI command,
	// and most never touch the filesystem service.
	filesystem func() filesystemconnect.FilesystemClient

	http    *http.Client
	baseURL string
	token   string
	user    string
}

type options struct {
	token     string
	user      string
	http1     bool
	h2c       bool
	json      bool
	client    *http.Client
	keepalive int
}

// Option configures Dial.
type Option func(*options)

// WithToken sends X-Access-Token on every call.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithUser picks the Unix user the way envd expects:
// "Authorization: Basic base64(user:)".
func WithUser(user string) Option { return func(o *options) { o.user = user } }

// WithHTTP1 uses HTTP/1.1 for every call to http:// and unix: targets.
// Without it a unix: target speaks h2c and an http:// target whichever of
// h2c and HTTP/1.1 the endpoint answers (see NegotiatingTransport), except
// for the process streams (see WithH2C).
func WithHTTP1() Option { return func(o *options) { o.http1 = true } }

// WithH2C keeps the process streams (Start, Connect) of unix: and http://
// targets on h2c with every other call. Without it they go over HTTP/1.1
// (see outputSplit).
func WithH2C() Option { return func(o *options) { o.h2c = true } }

// WithJSON uses the Connect JSON codec (as E2B's JS SDK does).
func WithJSON() Option { return func(o *options) { o.json = true } }

// WithHTTPClient replaces the HTTP client (and so the transport).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithKeepalive sets Keepalive-Ping-Interval (seconds) on Start and Connect.
func WithKeepalive(seconds int) Option { return func(o *options) { o.keepalive = seconds } }

// Dial prepares a client for "unix:/path", "http://host:port" or
// "https://host[:port]". It does not connect until the first call.
func Dial(target string, opts ...Option) (*Client, error) {
	var o options
	for _, fn := range opts {
		fn(&o)
	}
	hc, base, err := transportFor(target, o)
	if err != nil {
		return nil, err
	}
	copts := []connect.ClientOption{connect.WithInterceptors(headerInterceptor{o})}
	if onThisMachine(target) {
		// Compression pays over a network; on loopback or a socket it
		// only costs CPU at both ends (the daemon gzips every message of
		// a process's output, a listing's table among them).
		copts = append(copts, connect.WithAcceptCompression("gzip", nil, nil))
	}
	if o.json {
		copts = append(copts, connect.WithProtoJSON())
	} else {
		copts = append(copts, connect.WithCodec(outputCodec{}))
	}
	return &Client{
		Process:    processconnect.NewProcessClient(hc, base, copts...),
		Supervisor: sandtopv1connect.NewSupervisorClient(hc, base, copts...),
		Target:     target,
		filesystem: sync.OnceValue(func() filesystemconnect.FilesystemClient {
			return filesystemconnect.NewFilesystemClient(hc, base, copts...)
		}),
		http:    hc,
		baseURL: base,
		token:   o.token,
		user:    o.user,
	}, nil
}

// onThisMachine says whether target is a unix socket or a loopback address.
func onThisMachine(target string) bool {
	if strings.HasPrefix(target, "unix:") {
		return true
	}
	u, err := url.Parse(target)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost"
}

// Filesystem is the client of envd's filesystem service.
func (c *Client) Filesystem() filesystemconnect.FilesystemClient { return c.filesystem() }

func transportFor(target string, o options) (*http.Client, string, error) {
	if path, ok := strings.CutPrefix(target, "unix:"); ok {
		if path == "" {
			return nil, "", errors.New("envd: target unix: has no socket path")
		}
		if o.client != nil {
			return o.client, "http://localhost", nil
		}
		dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		h1 := plainTransport(true)
		h1.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return rawsock.Wrap(c), nil // the streams' messages are large
		}
		if o.http1 {
			return &http.Client{Transport: h1}, "http://localhost", nil
		}
		h2 := plainTransport(false)
		h2.DialContext = dial
		if o.h2c {
			return &http.Client{Transport: h2}, "http://localhost", nil
		}
		return &http.Client{Transport: outputSplit{streams: h1, rest: h2}}, "http://localhost", nil
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("envd: target %q: want unix:/path, http://host:port or https://host", target)
	}
	base := strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
	if o.client != nil {
		return o.client, base, nil
	}
	switch u.Scheme {
	case "http":
		if o.http1 {
			return &http.Client{Transport: plainTransport(true)}, base, nil
		}
		if o.h2c {
			return &http.Client{Transport: NegotiatingTransport()}, base, nil
		}
		// Every envd speaks HTTP/1.1, so the streams need no negotiation.
		return &http.Client{Transport: outputSplit{streams: plainTransport(true), rest: NegotiatingTransport()}}, base, nil
	case "https":
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		tr.ForceAttemptHTTP2 = !o.http1
		return &http.Client{Transport: tr}, base, nil
	default:
		return nil, "", fmt.Errorf("envd: target %q: scheme %q is not http, https or unix", target, u.Scheme)
	}
}

// plainTransport speaks h2c with prior knowledge, or HTTP/1.1.
func plainTransport(http1 bool) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var p http.Protocols
	if http1 {
		p.SetHTTP1(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	tr.Protocols = &p
	// Bigger frames and windows: output arrives in 64 KiB events, and the
	// 16 KiB default frame splits each into four.
	tr.HTTP2 = &http.HTTP2Config{MaxReadFrameSize: 1 << 20, MaxReceiveBufferPerStream: 8 << 20, MaxReceiveBufferPerConnection: 64 << 20}
	return tr
}

// outputSplit sends the process streams (Start, Connect) of a unix: or
// http:// target over HTTP/1.1 and every other call over h2c (or, for
// http://, what the endpoint speaks). A stream carries a
// program's output, and HTTP/1.1 carries it with fewer copies and
// wake-ups on both ends: the handler writes straight to its connection,
// where HTTP/2 hands each write to the connection's writer goroutine, which
// copies it into a frame, and the client copies it again out of the
// stream's buffer. A connection per stream costs little on a local socket.
type outputSplit struct{ streams, rest http.RoundTripper }

func (s outputSplit) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.URL.Path {
	case processconnect.ProcessStartProcedure, processconnect.ProcessConnectProcedure:
		return s.streams.RoundTrip(r)
	}
	return s.rest.RoundTrip(r)
}

func (s outputSplit) CloseIdleConnections() {
	for _, rt := range []http.RoundTripper{s.streams, s.rest} {
		if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// headerInterceptor adds the token, user and keepalive headers.
type headerInterceptor struct{ o options }

func (h headerInterceptor) set(hdr http.Header, procedure string) {
	if h.o.token != "" {
		hdr.Set("X-Access-Token", h.o.token)
	}
	if h.o.user != "" {
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(h.o.user+":")))
	}
	if h.o.keepalive > 0 && (procedure == processconnect.ProcessStartProcedure || procedure == processconnect.ProcessConnectProcedure) {
		hdr.Set("Keepalive-Ping-Interval", strconv.Itoa(h.o.keepalive))
	}
}

func (h headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		h.set(req.Header(), req.Spec().Procedure)
		return next(ctx, req)
	}
}

func (h headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader(), spec.Procedure)
		return conn
	}
}

func (h headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// Hello asks for the Supervisor extension. On stock envd, or our daemon in
// compat mode, the error satisfies IsUnimplemented.
func (c *Client) Hello(ctx context.Context) (*sandtopv1.HelloResponse, error) {
	res, err := c.Supervisor.Hello(ctx, connect.NewRequest(&sandtopv1.HelloRequest{}))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// Health calls GET /health; any 2xx is healthy.
func (c *Client) Health(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/health", nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("X-Access-Token", c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("envd health %s: %w", c.Target, err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("envd health %s: HTTP %d", c.Target, res.StatusCode)
	}
	return nil
}

// IsUnimplemented is true when the daemon lacks the called service or method.
func IsUnimplemented(err error) bool { return connect.CodeOf(err) == connect.CodeUnimplemented }

// Close drops idle connections (streams in flight are not affected).
func (c *Client) Close() { c.http.CloseIdleConnections() }
