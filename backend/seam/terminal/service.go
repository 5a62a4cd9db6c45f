package terminal

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

// Service spawns, lists and attaches terminal sessions. It holds
// everything they need from the seam's Runtime, which fills it in: the envd
// client, the extension (nil on stock envd), the control plane (session
// groups, foreground, signals, removal), the runtime root and the
// environment boundary.
type Service struct {
	Process    processconnect.ProcessClient
	Supervisor sandtopv1connect.SupervisorClient // nil without the extension
	Plane      control.Plane
	Runner     control.Runner // short bash scripts, for writing private state
	Root       string         // runtime root in the sandbox
	// ControlEnv is the runner's own environment: blanks for every
	// credential-shaped name, never the child's secrets.
	ControlEnv map[string]string
	// ChildEnv applies the environment boundary: the sandbox's scrubbed
	// base environment with explicit entries layered on top, as NAME=VALUE.
	ChildEnv func(ctx context.Context, explicit map[string]string) ([]string, error)
	// Poll is the cadence of liveness checks during Terminate.
	Poll time.Duration
	// Gone recognises errors proving the sandbox no longer exists; a
	// session in a vanished sandbox counts as empty. Nil: never.
	Gone func(error) bool
}

// terminalTagPrefix marks the PTY processes that are sandtop terminals. The
// tag is visible to List and ListTerminals, so a new client can find them
// after a restart: "sandtop-terminal:<id>:<graceMs>", then ":<user tag>"
// when Spec.Tag is set (it may itself hold colons).
const terminalTagPrefix = "sandtop-terminal:"

// terminalTag writes the tag. The grace goes on the wire in whole
// milliseconds, rounded up so that a positive grace stays positive.
func terminalTag(id string, grace time.Duration, user string) string {
	ms := (grace + time.Millisecond - 1) / time.Millisecond
	tag := terminalTagPrefix + id + ":" + strconv.FormatInt(int64(ms), 10)
	if user != "" {
		tag += ":" + user
	}
	return tag
}

// ParseTag reads back what terminalTag wrote; tags written before
// user tags existed have none.
func ParseTag(tag string) (id string, grace time.Duration, user string, ok bool) {
	rest, ok := strings.CutPrefix(tag, terminalTagPrefix)
	if !ok {
		return "", 0, "", false
	}
	id, g, ok := strings.Cut(rest, ":")
	if !ok || !validTerminalID(id) {
		return "", 0, "", false
	}
	g, user, _ = strings.Cut(g, ":")
	ms, err := strconv.ParseInt(g, 10, 32)
	if err != nil || ms <= 0 {
		return "", 0, "", false
	}
	return id, time.Duration(ms) * time.Millisecond, user, true
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
func (rt *Service) stateDir(id string) string {
	return path.Join(rt.Root, wrapper.TerminalsDir, id)
}

// pollInterval is the Terminate liveness cadence, never zero.
func (rt *Service) pollInterval() time.Duration {
	if rt.Poll <= 0 {
		return 10 * time.Millisecond
	}
	return rt.Poll
}
