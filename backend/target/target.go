// Package target turns what the operator named on the command line — the
// local sandbox, "--envd URL [--token-file F]", "--e2b [ID]", "--kube" — into a list
// of dialable envd endpoints, one per sandbox, that the CLI and the TUI
// open as seam runtimes (dial.go).
package target

import (
	"fmt"
	"net/http"

	"sandtop/backend/e2b"
	"sandtop/backend/kube"
)

// Kind says where a target came from.
type Kind string

const (
	KindLocal Kind = "local" // the embedded daemon on its unix socket
	KindEnvd  Kind = "envd"  // any envd-compatible endpoint given by URL
	KindE2B   Kind = "e2b"   // an E2B sandbox found through the control plane
	KindKube  Kind = "kube"  // a Kubernetes pod found through the API server
)

// Target is one sandbox to supervise.
type Target struct {
	// Name is unique within one ListTargets result and safe to show:
	// "local", "envd:<host>", "e2b:<sandbox id>".
	Name string
	Kind Kind
	// Endpoint is what envd.Dial takes: "unix:<socket>" or an http(s) URL.
	Endpoint string
	// Token is the X-Access-Token; never print it (String leaves it out).
	Token string
	// User picks the sandbox user through the Basic-auth username, as
	// E2B's SDKs do; empty means the daemon's default user.
	User string
	// Headers go with every request (E2B's routing headers).
	Headers http.Header
	// CAFile is a PEM file of the CA that signed an https endpoint's
	// certificate (a daemon serving its own TLS), instead of the system's.
	CAFile string
	// HTTPClient, when set, carries every request (a pod's daemon is
	// reached through the API server, with its credentials).
	HTTPClient *http.Client

	// Hints for the seam. Cwd is the default working directory for spawns;
	// RuntimeRoot is where the seam keeps its state dirs on a stock envd
	// (our daemon reports its own through Hello, which then wins). Empty
	// means the seam's own default.
	Cwd         string
	RuntimeRoot string
	// AgentWorkspace is the agent's working directory, where a DeepSeek
	// Harness agent (dsh-subprocess-e2b) keeps its .dsh-e2b state. sandtop
	// only reads there; its own state goes to RuntimeRoot. Empty when not
	// applicable.
	AgentWorkspace string

	// SandboxID and EnvdVersion are set for E2B targets.
	SandboxID   string
	EnvdVersion string
	// E2B is the sandbox as E2B's control plane last described it (alias,
	// template, metadata, state, end time); nil for other kinds.
	E2B *e2b.Sandbox

	// Kube is the pod as the API server last described it; nil for
	// other kinds.
	Kube *kube.Pod

	// Err is set when the target was found but could not be prepared (an
	// E2B connect failed); the target is listed so the UI can show why.
	Err error

	e2b  *e2b.Client    // the control plane that knows this sandbox
	conn e2b.Connection // its connect answer
	kube *kube.Cluster  // the API server that knows this pod
}

// String names the target without its token.
func (t Target) String() string {
	s := fmt.Sprintf("%s (%s %s", t.Name, t.Kind, t.Endpoint)
	if t.User != "" {
		s += " as " + t.User
	}
	if t.Err != nil {
		s += ": " + t.Err.Error()
	}
	return s + ")"
}

// GoString keeps %#v from printing the token too.
func (t Target) GoString() string { return t.String() }
