package seam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

// terminalRuntime is everything terminal sessions need from the Runtime:
// the envd client, the extension (nil on stock envd), the control plane
// (session groups, foreground, signals, removal), the runtime root and the
// environment boundary.
type terminalRuntime struct {
	proc processconnect.ProcessClient
	sup  sandtopv1connect.SupervisorClient // nil without the extension
	cp   control.Plane
	cmd  control.Runner // short bash scripts, for writing private state
	root string         // runtime root in the sandbox
	// controlEnv is the runner's own environment: blanks for every
	// credential-shaped name, never the child's secrets.
	controlEnv map[string]string
	// childEnv applies the environment boundary: the sandbox's scrubbed
	// base environment with explicit entries layered on top, as NAME=VALUE.
	childEnv func(ctx context.Context, explicit map[string]string) ([]string, error)
	// poll is the cadence of liveness checks during Terminate.
	poll time.Duration
	// gone recognises errors proving the sandbox no longer exists; a
	// session in a vanished sandbox counts as empty. Nil: never.
	gone func(error) bool
}

// terminalTagPrefix marks the PTY processes that are sandtop terminals. The
// tag is visible to List and ListTerminals, so a new client can find them
// after a restart: "sandtop-terminal:<id>:<graceMs>", then ":<user tag>"
// when TerminalSpec.Tag is set (it may itself hold colons).
const terminalTagPrefix = "sandtop-terminal:"

func terminalTag(id string, graceMs int, user string) string {
	tag := terminalTagPrefix + id + ":" + strconv.Itoa(graceMs)
	if user != "" {
		tag += ":" + user
	}
	return tag
}

// parseTerminalTag reads back what terminalTag wrote; tags written before
// user tags existed have none.
func parseTerminalTag(tag string) (id string, graceMs int, user string, ok bool) {
	rest, ok := strings.CutPrefix(tag, terminalTagPrefix)
	if !ok {
		return "", 0, "", false
	}
	id, g, ok := strings.Cut(rest, ":")
	if !ok || !validTerminalID(id) {
		return "", 0, "", false
	}
	g, user, _ = strings.Cut(g, ":")
	graceMs, err := strconv.Atoi(g)
	if err != nil || graceMs <= 0 {
		return "", 0, "", false
	}
	return id, graceMs, user, true
}

func newTerminalID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("terminal id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func validTerminalID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// stateDir is <runtimeRoot>/terminals/<id>.
func (rt *terminalRuntime) stateDir(id string) string {
	return path.Join(rt.root, wrapper.TerminalsDir, id)
}

// pollInterval is the Terminate liveness cadence, never zero.
func (rt *terminalRuntime) pollInterval() time.Duration {
	if rt.poll <= 0 {
		return 10 * time.Millisecond
	}
	return rt.poll
}
