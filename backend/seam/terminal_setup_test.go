package seam

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/seam/terminal"
	"sandtop/testwait"
)

// bootstrapHook makes the runner's bash source script before the runner
// itself runs (BASH_ENV is read by every non-interactive bash), so a test
// can stall or break the bootstrap without touching the runner.
func bootstrapHook(t *testing.T, env *terminalTestEnv, script string) *terminal.Service {
	t.Helper()
	hook := filepath.Join(t.TempDir(), "hook.bash")
	if err := os.WriteFile(hook, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := env.rt.terminalService(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rt.ControlEnv = map[string]string{"BASH_ENV": hook}
	return rt
}

// terminalDirs lists the state directories under <runtimeRoot>/terminals.
func terminalDirs(t *testing.T, env *terminalTestEnv) []string {
	t.Helper()
	return terminalDirsIn(t, env.d.RuntimeRoot)
}

func terminalDirsIn(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "terminals"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestTerminalBootstrapExitBeforeBoundaryRollsBack(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	rt := bootstrapHook(t, env, "echo 'bootstrap noise'; exit 3\n")
	_, err := rt.Spawn(context.Background(), shellSpec(env.cwd))
	if err == nil || !strings.Contains(err.Error(), "terminal exited before publishing its output boundary") {
		t.Fatalf("err = %v", err)
	}
	if dirs := terminalDirs(t, env); len(dirs) != 0 {
		t.Fatalf("state directories left behind: %v", dirs)
	}
}

func TestTerminalAllocationCancelRollsBackTheSession(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, mode.compat)
			// The bootstrap stalls, with a background job of its own, so
			// rollback has a whole session to empty. Cancel once it runs.
			started := filepath.Join(t.TempDir(), "started")
			// A duration unique to this run tells its sleeps from others'.
			nap := "sleep " + strconv.Itoa(100000+int(time.Now().UnixNano()%100000))
			rt := bootstrapHook(t, env, nap+" & : >"+started+"; "+nap+"\n")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := time.Now()
			result := make(chan error, 1)
			go func() {
				_, err := rt.Spawn(ctx, shellSpec(env.cwd))
				result <- err
			}()
			testwait.NoError(t, 20*time.Second, func() error { _, err := os.Stat(started); return err })
			// While the bootstrap runs, the private state is there and private.
			checkPrivateState(t, env)
			cancel()
			err := <-result
			if err == nil || !strings.Contains(err.Error(), "terminal allocation cancelled") {
				t.Fatalf("err = %v", err)
			}
			if time.Since(start) > 10*time.Second {
				t.Fatalf("rollback took %s", time.Since(start))
			}
			if dirs := terminalDirs(t, env); len(dirs) != 0 {
				t.Fatalf("state directories left behind: %v", dirs)
			}
			infos, err := env.rt.listTerminals(context.Background())
			if err != nil || len(infos) != 0 {
				t.Fatalf("terminals left: %+v, %v", infos, err)
			}
			rows, err := env.rt.control.Processes(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rows {
				if p.Live() && hasCmdline(p.Pid, nap) {
					t.Fatalf("bootstrap process %d survived the rollback", p.Pid)
				}
			}
		})
	}
}

// checkPrivateState asserts the one terminal state dir is 0700 and holds
// the runner's four files, each 0600.
func checkPrivateState(t *testing.T, env *terminalTestEnv) {
	t.Helper()
	dirs := terminalDirs(t, env)
	if len(dirs) != 1 {
		t.Fatalf("state dirs %v, want one", dirs)
	}
	dir := filepath.Join(env.d.RuntimeRoot, "terminals", dirs[0])
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir %s: %v %v", dir, fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, %v", e.Name(), fi.Mode(), err)
		}
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "argv environment output-marker runner.bash" {
		t.Fatalf("state files %v", names)
	}
}

func hasCmdline(pid int, cmd string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && string(b) == strings.ReplaceAll(cmd, " ", "\x00")+"\x00"
}

func TestTerminalCancelAfterPublicationHasNoEffect(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	out := collect(t, term)
	out.waitFor(t, 0, `\$ $`, 10*time.Second)
	write(t, term, "echo still here\r")
	out.waitFor(t, 0, `\r\nstill here\r\n`, 10*time.Second)
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalRuntimeDisposalOwnsTerminals(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	ctx := context.Background()
	var terms []*Terminal
	for range 2 {
		term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, term)
	}
	if err := env.rt.disposeTerminals(ctx); err != nil {
		t.Fatal(err)
	}
	for _, term := range terms {
		select {
		case <-term.Done():
		default:
			t.Fatalf("terminal %d still running after DisposeTerminals", term.Pid())
		}
	}
	if infos, err := env.rt.listTerminals(ctx); err != nil || len(infos) != 0 {
		t.Fatalf("left: %+v, %v", infos, err)
	}
	if dirs := terminalDirs(t, env); len(dirs) != 0 {
		t.Fatalf("state directories left behind: %v", dirs)
	}
	if err := env.rt.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd)); !errors.Is(err, ErrDisposing) {
		t.Fatalf("spawn after Dispose: %v", err)
	}
}

func TestTerminalNaturalExitIsReleased(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	ctx := context.Background()
	spec := TerminalSpec{Argv: []string{"/bin/true"}, Cwd: env.cwd, Rows: 5, Cols: 5, Grace: 100 * time.Millisecond}
	term, err := env.rt.SpawnTerminal(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	<-term.Done()
	testwait.NoError(t, 10*time.Second, func() error {
		if env.rt.ownedTerminals() != 0 {
			return errors.New("still owned")
		}
		return nil
	})
	if dirs := terminalDirs(t, env); len(dirs) != 0 {
		t.Fatalf("state directories left behind: %v", dirs)
	}
}

func TestTerminalEnvironmentBoundary(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnvWith(t, daemon.Config{Env: []string{
		"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "KEEP=visible",
		"NPM_TOKEN=leak", "DB_PASSWORD=leak", "DSH_STALE=leak",
	}})
	ctx := context.Background()
	spec := TerminalSpec{
		Argv: []string{"/usr/bin/env"}, Cwd: env.cwd, Rows: 24, Cols: 80, Grace: 100 * time.Millisecond,
		Env: map[string]string{"API_KEY": "explicit", "DSH_MODE": "on", "KEEP": "overridden"},
	}
	term, err := env.rt.SpawnTerminal(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, term)
	out.waitEnd(t, 10*time.Second)
	got := out.String()
	for _, want := range []string{"API_KEY=explicit\r\n", "DSH_MODE=on\r\n", "KEEP=overridden\r\n", "LANG=C.UTF-8\r\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("child env lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "leak") {
		t.Errorf("scrubbed ambient values reached the child:\n%s", got)
	}
}

func TestTerminalStartFailureRemovesState(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	spec := shellSpec("/does/not/exist")
	_, err := env.rt.SpawnTerminal(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "start terminal") {
		t.Fatalf("err = %v", err)
	}
	if dirs := terminalDirs(t, env); len(dirs) != 0 {
		t.Fatalf("state directories left behind: %v", dirs)
	}
}

func TestTerminalTinyGraceStillKills(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	spec := shellSpec(env.cwd)
	spec.Grace = time.Millisecond // interactive bash ignores TERM: KILL must still go out
	term, err := env.rt.SpawnTerminal(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	// Only once its prompt is up does bash ignore TERM.
	collect(t, term).waitFor(t, 0, regexp.QuoteMeta(prompt), 10*time.Second)
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if o, _ := term.Outcome(); o.Signal != "SIGKILL" {
		t.Fatalf("outcome %v", o)
	}
}
