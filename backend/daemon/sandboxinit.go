package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sandtop/backend/daemon/auth"
	"sandtop/backend/daemon/transport"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
)

// maxInitBody bounds a POST /init body: env vars and a token, nothing large.
const maxInitBody = 1 << 20

// sandboxDefaults is what E2B's control plane hands a sandbox through POST
// /init: the user and working directory of requests that name none, the
// sandbox-wide environment, and the access token.
type sandboxDefaults struct {
	mu      sync.RWMutex
	user    string            // "" → the daemon's own user
	workdir string            // "" → the user's home
	env     map[string]string // layered over Config.Env's absent names
	token   string            // "" → no token
	// lastInit is the newest /init timestamp applied (Unix ns); an older
	// one (a retried or replayed request) changes nothing.
	lastInit int64
}

func (s *sandboxDefaults) get() (user, workdir string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.user, s.workdir
}

func (s *sandboxDefaults) currentToken() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.token
}

// baseEnv is the sandbox-wide environment of a process of user u:
// Config.Env, then /init's variables whose names Config.Env does not set
// (what the operator configured wins, as envd's own variables win over the
// control plane's). For a user other than the daemon's, Config.Env's HOME,
// USER, LOGNAME and XDG_*_HOME/_DIR are left out: serve takes Config.Env
// from its own environment, where they describe the daemon's user.
func (d *Daemon) baseEnv(u userInfo) []string {
	env := d.cfg.Env
	if u.cred != nil {
		env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			k, _, _ := cutEnv(kv)
			return userOwnVar(k)
		})
	}
	d.defaults.mu.RLock()
	defer d.defaults.mu.RUnlock()
	if len(d.defaults.env) == 0 {
		return env
	}
	fixed := map[string]bool{}
	for _, kv := range d.cfg.Env {
		if k, _, ok := cutEnv(kv); ok {
			fixed[k] = true
		}
	}
	env = slices.Clone(env)
	for _, k := range slices.Sorted(maps.Keys(d.defaults.env)) {
		if !fixed[k] {
			env = append(env, k+"="+d.defaults.env[k])
		}
	}
	return env
}

// userOwnVar: a variable that describes the daemon's own user.
func userOwnVar(k string) bool {
	switch k {
	case "HOME", "USER", "LOGNAME":
		return true
	}
	return strings.HasPrefix(k, "XDG_") && (strings.HasSuffix(k, "_HOME") || strings.HasSuffix(k, "_DIR"))
}

// initRequest is envd's POST /init body. hyperloopIP and lifecycleID concern
// E2B's own infrastructure and are ignored.
type initRequest struct {
	EnvVars        map[string]string `json:"envVars"`
	AccessToken    *string           `json:"accessToken"`
	Timestamp      *time.Time        `json:"timestamp"`
	DefaultUser    *string           `json:"defaultUser"`
	DefaultWorkdir *string           `json:"defaultWorkdir"`
	CaBundle       string            `json:"caBundle"`
	VolumeMounts   []json.RawMessage `json:"volumeMounts"`
}

var (
	errInitTokenReset    = errors.New("access token reset not authorized")
	errInitTokenMismatch = errors.New("access token validation failed")
)

// checkInitToken applies envd's rule (without E2B's metadata service): a
// daemon with a token takes /init only from a request whose body carries
// that same token, so nobody without it can change or clear it; a daemon
// without one takes any (the first setup).
func (s *sandboxDefaults) checkInitToken(body *string) error {
	if s.token == "" {
		return nil
	}
	if body == nil || *body == "" {
		return errInitTokenReset
	}
	if !auth.SameToken(*body, s.token) {
		return errInitTokenMismatch
	}
	return nil
}

// postInit serves POST /init. Guard has not checked the token header for it
// (the token is in the body, as envd takes it), only the peer.
func (d *Daemon) postInit(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxInitBody+1))
	if err != nil {
		initError(w, http.StatusBadRequest, fmt.Errorf("read /init body: %w", err))
		return
	}
	if len(raw) > maxInitBody {
		initError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("/init body is larger than %d bytes", maxInitBody))
		return
	}
	var req initRequest
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			initError(w, http.StatusBadRequest, fmt.Errorf("/init body is not valid JSON: %w", err))
			return
		}
	}
	clear(raw)
	d.defaults.mu.Lock()
	defer d.defaults.mu.Unlock()
	if err := d.defaults.checkInitToken(req.AccessToken); err != nil {
		initError(w, http.StatusUnauthorized, err)
		return
	}
	transport.Authenticated(r.Context())
	if req.Timestamp != nil {
		ts := req.Timestamp.UnixNano()
		if ts <= d.defaults.lastInit {
			w.WriteHeader(http.StatusNoContent) // stale: the newer one stands
			return
		}
	}
	if err := d.checkInit(&req); err != nil {
		initError(w, http.StatusBadRequest, err)
		return
	}
	if req.Timestamp != nil {
		d.defaults.lastInit = req.Timestamp.UnixNano()
	}
	if req.EnvVars != nil {
		d.defaults.env = maps.Clone(req.EnvVars)
	}
	if req.AccessToken != nil && *req.AccessToken != "" {
		d.defaults.token = *req.AccessToken
	}
	if req.DefaultUser != nil && *req.DefaultUser != "" {
		d.defaults.user = *req.DefaultUser
	}
	if req.DefaultWorkdir != nil && *req.DefaultWorkdir != "" {
		d.defaults.workdir = *req.DefaultWorkdir
	}
	d.log.Info("init", "default_user", d.defaults.user, "default_workdir", d.defaults.workdir,
		"env_vars", len(d.defaults.env), "token", d.defaults.token != "")
	w.WriteHeader(http.StatusNoContent)
}

// checkInit refuses what the daemon could not honour, before anything is
// changed: envd would take these and fail every later request instead.
func (d *Daemon) checkInit(req *initRequest) error {
	if err := checkEnvNames(req.EnvVars); err != nil {
		return fmt.Errorf("envVars: %s", errMessage(err))
	}
	for k, v := range req.EnvVars {
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("envVars: the value of %q holds a NUL byte", clip(k))
		}
	}
	if req.DefaultUser != nil && *req.DefaultUser != "" {
		if _, err := d.lookupUser(*req.DefaultUser); err != nil {
			return fmt.Errorf("defaultUser: %s", errMessage(err))
		}
	}
	if req.DefaultWorkdir != nil && strings.ContainsRune(*req.DefaultWorkdir, 0) {
		return errors.New("defaultWorkdir holds a NUL byte")
	}
	if req.CaBundle != "" {
		return errors.New("caBundle: installing CA certificates is not supported by this daemon")
	}
	if len(req.VolumeMounts) > 0 {
		return errors.New("volumeMounts: mounting volumes is not supported by this daemon")
	}
	return nil
}

// errMessage is a Connect error's message without its code.
func errMessage(err error) string {
	if ce, ok := errors.AsType[*connect.Error](err); ok {
		return ce.Message()
	}
	return err.Error()
}

func initError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, err.Error())
}

// getEnvs serves GET /envs: the sandbox-wide environment every command
// starts with (Config.Env and /init's variables), as a JSON object.
func (d *Daemon) getEnvs(w http.ResponseWriter, r *http.Request) {
	out := map[string]string{}
	for _, kv := range d.baseEnv(userInfo{}) {
		if k, v, ok := cutEnv(kv); ok {
			out[k] = v
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
