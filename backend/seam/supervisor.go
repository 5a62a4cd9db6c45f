package seam

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/shim"
	"sandtop/wrapper"
)

// On stock envd each group runs under sandtop's standalone supervisor (see
// shim.StandaloneMain): sandtop's own executable, uploaded once into the
// runtime root under a name that carries its hash, and reused by every
// later spawn into that sandbox. Where the sandbox cannot run it (another
// architecture, a noexec filesystem, no upload), the bash wrapper runs the
// groups instead, and the runtime says why (SupervisorFallback).
//
// Only a spawn installs it: looking at a sandbox never changes it.

// supervisorState is the runtime's one decision: the supervisor's path in
// the sandbox, or why the wrapper runs the groups. Until a spawn proves it
// (or installs it), the path is assumed: the usual case, a sandbox that
// has it from an earlier command, then costs no round trip at all.
type supervisorState struct {
	mu       sync.Mutex
	decided  bool
	path     string
	fallback string
	assumed  string // the path a build of this name would have
}

// SupervisorFallback says why groups this runtime spawns on stock envd
// run under the bash wrapper; "" when they run under sandtop's supervisor,
// on sandtop's daemon, or before the first spawn decided it.
func (r *Runtime) SupervisorFallback() string {
	r.sup.mu.Lock()
	defer r.sup.mu.Unlock()
	return r.sup.fallback
}

// supervisor returns the supervisor's path in the sandbox ("" when the
// wrapper must run the groups), and whether that path is only assumed
// (see confirmSupervisor). An error is a failure that may pass.
func (r *Runtime) supervisor(ctx context.Context) (path string, assumed bool, err error) {
	r.sup.mu.Lock()
	if r.sup.decided {
		defer r.sup.mu.Unlock()
		return r.sup.path, false, nil
	}
	if r.sup.assumed == "" {
		local, why := r.localSupervisor()
		if why != "" {
			r.sup.decided, r.sup.fallback = true, why
			r.sup.mu.Unlock()
			r.log.Info("groups run under the bash wrapper", "reason", why)
			return "", false, nil
		}
		id, err := SupervisorID(local)
		if err != nil {
			r.sup.decided, r.sup.fallback = true, "sandtop cannot read its supervisor: "+err.Error()
			r.sup.mu.Unlock()
			return "", false, nil
		}
		r.sup.assumed = wrapper.SupervisorBinary(r.cfg.RuntimeRoot, id)
	}
	defer r.sup.mu.Unlock()
	return r.sup.assumed, true, nil
}

// supervisorProven records that a spawn ran under the assumed path.
func (r *Runtime) supervisorProven() {
	r.sup.mu.Lock()
	defer r.sup.mu.Unlock()
	if !r.sup.decided {
		r.sup.decided, r.sup.path = true, r.sup.assumed
	}
}

// confirmSupervisor finds or installs the supervisor, or decides on the
// wrapper, for good.
func (r *Runtime) confirmSupervisor(ctx context.Context) (string, bool, error) {
	r.sup.mu.Lock()
	defer r.sup.mu.Unlock()
	if r.sup.decided {
		return r.sup.path, false, nil
	}
	p, fallback, err := r.installSupervisor(ctx)
	if err != nil {
		return "", false, err
	}
	r.sup.decided, r.sup.path, r.sup.fallback = true, p, fallback
	if fallback != "" {
		r.log.Info("groups run under the bash wrapper", "reason", fallback)
	}
	return p, false, nil
}

// localSupervisor is the local build to upload, or why there is none.
func (r *Runtime) localSupervisor() (path, why string) {
	switch {
	case r.cfg.SupervisorBinary == NoSupervisor:
		return "", "the supervisor is switched off"
	case runtime.GOOS != "linux":
		return "", "sandtop runs on " + runtime.GOOS + ", and its supervisor only on linux"
	case r.cfg.Upload == nil:
		return "", "no file upload to this sandbox"
	case r.cfg.SupervisorBinary != "":
		return r.cfg.SupervisorBinary, ""
	}
	if !shim.Entered() {
		// Else the probe would run this executable's own main.
		return "", "this executable does not serve as the supervisor (its main does not call shim.RunIfSubcommand)"
	}
	p, err := os.Executable()
	if err != nil {
		return "", "sandtop cannot find its own executable: " + err.Error()
	}
	return p, ""
}

// scannerPath is where this build's supervisor would be installed, for the
// listing's reads (control.Runner.Scanner): present or not, no round trip
// asks, and looking never installs it. Unlike a spawn, a listing needs no
// upload of its own: a copy another command installed serves as well.
func scannerPath(cfg RuntimeConfig) string {
	local := cfg.SupervisorBinary
	switch {
	case local == NoSupervisor || runtime.GOOS != "linux":
		return ""
	case local == "" && !shim.Entered():
		return "" // never installed: it would not serve as the supervisor
	case local == "":
		p, err := os.Executable()
		if err != nil {
			return ""
		}
		local = p
	}
	id, err := SupervisorID(local)
	if err != nil {
		return ""
	}
	return wrapper.SupervisorBinary(cfg.RuntimeRoot, id)
}

// installSupervisor finds or installs the supervisor: the path, or why
// there is none. Called with r.sup.mu held.
func (r *Runtime) installSupervisor(ctx context.Context) (path, fallback string, err error) {
	local, why := r.localSupervisor()
	if why != "" {
		return "", why, nil
	}
	id, err := SupervisorID(local)
	if err != nil {
		return "", "sandtop cannot read its supervisor: " + err.Error(), nil
	}
	path = wrapper.SupervisorBinary(r.cfg.RuntimeRoot, id)
	res, err := r.runner.Run(ctx, supervisorProbeScript, []string{path, shim.ProbeSubcommand}, nil)
	if err != nil {
		return "", "", fmt.Errorf("look for sandtop's supervisor: %w", err)
	}
	lines := strings.SplitN(string(res.Stdout), "\n", 3)
	machine := strings.TrimSpace(lines[0])
	if want := unameMachine(runtime.GOARCH); machine != "" && !slices.Contains(want, machine) {
		return "", fmt.Sprintf("the sandbox is %s and sandtop is built for %s", machine, runtime.GOARCH), nil
	}
	if len(lines) > 1 && strings.TrimSpace(lines[1]) == shim.ProbeAnswer {
		return path, "", nil // installed before: its name says which build
	}
	sum, err := fileSHA256(local)
	if err != nil {
		return "", "sandtop cannot read its supervisor: " + err.Error(), nil
	}
	// Upload under a private name, then check, make executable, run it,
	// and only then give it its name: a reader of the name finds it whole.
	f, err := os.Open(local)
	if err != nil {
		return "", "sandtop cannot read its supervisor: " + err.Error(), nil
	}
	defer f.Close()
	tmp := path + ".part-" + rand.Text()[:8]
	if err := r.cfg.Upload(ctx, tmp, f); err != nil {
		_, _ = r.runner.Run(r.bg, `rm -f -- "$1"`, []string{tmp}, nil)
		return "", "", fmt.Errorf("upload sandtop's supervisor: %w", err)
	}
	res, err = r.runner.Run(ctx, supervisorInstallScript, []string{tmp, path, shim.ProbeSubcommand, shim.ProbeAnswer, sum}, nil)
	if err != nil {
		_, _ = r.runner.Run(r.bg, `rm -f -- "$1"`, []string{tmp}, nil)
		return "", "", fmt.Errorf("install sandtop's supervisor: %w", err)
	}
	switch res.ExitCode {
	case 0:
		return path, "", nil
	case 3:
		return "", "the uploaded copy differs from sandtop's (sha256 " + strings.TrimSpace(string(res.Stdout)) + ")", nil
	default:
		why := strings.TrimSpace(string(res.Stderr))
		if why == "" {
			why = fmt.Sprintf("exit %d", res.ExitCode)
		}
		return "", "the sandbox cannot execute sandtop's supervisor under " + r.cfg.RuntimeRoot + " (a noexec filesystem?): " + why, nil
	}
}

// SupervisorID names a build of the supervisor: a SHA-256 of its Go build
// ID (which changes with anything it was built from), or of the whole
// file when it has none. Cheap, so every command can name it.
func SupervisorID(p string) (string, error) {
	if f, err := elf.Open(p); err == nil {
		defer f.Close()
		if sec := f.Section(".note.go.buildid"); sec != nil {
			if b, err := sec.Data(); err == nil && len(b) > 16 {
				sum := sha256.Sum256(b)
				return hex.EncodeToString(sum[:]), nil
			}
		}
	}
	return fileSHA256(p)
}

// supervisorProbeScript prints the machine, then the probe's answer when
// the supervisor named $1 is installed and runs. It starts nothing else.
const supervisorProbeScript = `uname -m
[ -x "$1" ] && "$1" "$2" 2>/dev/null
exit 0`

// supervisorInstallScript checks the upload's hash (when sha256sum is
// there), makes it executable, runs it, and names it. Exit 3: the hash
// differs; 4: it does not run (stderr says why).
const supervisorInstallScript = `tmp=$1 dest=$2
if command -v sha256sum >/dev/null; then
	read -r sum _ < <(sha256sum -- "$tmp")
	if [ "$sum" != "$5" ]; then rm -f -- "$tmp"; printf '%s\n' "$sum"; exit 3; fi
fi
chmod 700 -- "$tmp" || { rm -f -- "$tmp"; exit 4; }
out=$("$tmp" "$3" 2>&1)
if [ "$out" != "$4" ]; then rm -f -- "$tmp"; printf '%s\n' "${out:-no answer}" >&2; exit 4; fi
mv -f -- "$tmp" "$dest"`

// unameMachine is what uname -m says on machines a GOARCH runs on.
func unameMachine(goarch string) []string {
	switch goarch {
	case "amd64":
		return []string{"x86_64"}
	case "arm64":
		return []string{"aarch64", "arm64"}
	case "386":
		return []string{"i386", "i486", "i586", "i686"}
	case "arm":
		return []string{"armv6l", "armv7l", "armv8l"}
	}
	return []string{goarch}
}

// fileSHA256 hashes a file, once per path and size for the process's life:
// a CLI command that spawns many groups hashes its executable once.
func fileSHA256(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", p, st.Size(), st.ModTime().UnixNano())
	hashMu.Lock()
	defer hashMu.Unlock()
	if h, ok := hashes[key]; ok {
		return h, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	hashes[key] = sum
	return sum, nil
}

var (
	hashMu sync.Mutex
	hashes = map[string]string{}
)

// NoSupervisor, as RuntimeConfig.SupervisorBinary, runs every group on
// stock envd under the bash wrapper.
const NoSupervisor = "-"

// supervisedStart is the Start of the standalone supervisor (stock envd):
// its argv names only the state directory; the program's argv and
// environment travel at the head of stdin.
func (r *Runtime) supervisedStart(h *Handle, bin string, spec SpawnSpec, env []string, controlEnv map[string]string) (*connect.Request[process.StartRequest], []byte, error) {
	payload, err := shim.StandalonePayload(shim.StandaloneSpec{
		Argv:         spec.Argv,
		Env:          env,
		ForwardStdin: !spec.Stdio.Stdin.Ignore,
		StdoutSpill:  spillCap(spec.Stdio.Stdout),
		StderrSpill:  spillCap(spec.Stdio.Stderr),
		Tag:          spec.Tag,
	})
	if err != nil {
		return nil, nil, err
	}
	wantStdin := true
	cwd := spec.Cwd
	req := &process.StartRequest{
		Process: &process.ProcessConfig{Cmd: bin, Args: []string{wrapper.SuperviseSubcommand, h.stateDir}, Envs: controlEnv, Cwd: &cwd},
		Stdin:   &wantStdin,
	}
	if spec.Tag != "" {
		req.Tag = &spec.Tag
	}
	h.supervised = true
	return connect.NewRequest(req), payload, nil
}
