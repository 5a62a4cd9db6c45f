package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
	"sandtop/demo"
	"sandtop/sandbox"
)

// demoFinishWait bounds the wait for the demo's finished job to finish, so
// it shows up as finished (exit 3) right away.
const demoFinishWait = 15 * time.Second

func newDemoCmd(g *globalFlags, f *factory) *cobra.Command {
	var noTUI bool
	tf := &tuiFlags{}
	c := &cobra.Command{
		Use:   "demo [--no-tui]",
		Short: "Start a demo workload on the local sandbox and open the TUI on it",
		Long: `Starts an agent-like workload on the local sandbox (or the target the flags
name), then opens the TUI on it:

  build       a noisy build log that never ends
  dev-server  a dev server whose workers ignore SIGTERM
  migrate     a job that already failed with exit code 3
  confirm     a terminal waiting at a prompt for input
  top         a full-screen top in a terminal

A re-run first removes what the previous run started (by tag), so nothing
is duplicated. With --no-tui it prints what it started, checks it through
the same listing as 'sandtop ls', and exits 0 (CI's smoke test).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.MutableConnection(cmd.Context(), "start the demo")
			if err != nil {
				return err
			}
			defer s.Close()
			w := cmd.OutOrStdout()
			started, err := startDemo(cmd.Context(), s, w)
			if err != nil {
				return err
			}
			if noTUI {
				return verifyDemo(cmd.Context(), s, w, started)
			}
			fmt.Fprintln(w, "opening the TUI; quitting it leaves the demo running ('sandtop daemon stop' ends everything)")
			s.Close()
			return runTUI(cmd.Context(), g, tf, cmd.Flags())
		},
	}
	c.Flags().BoolVar(&noTUI, "no-tui", false, "start the workload, verify it with ls, print it and exit")
	tf.register(c.Flags())
	return c
}

// demoStarted is one started demo item: the pgid of a process group or
// the pid of a terminal.
type demoStarted struct {
	item demo.Item
	id   int
}

// startDemo removes the previous run's items and starts the workload.
func startDemo(ctx context.Context, s *connection, w io.Writer) ([]demoStarted, error) {
	if n, err := removeOldDemo(ctx, s); err != nil {
		return nil, fmt.Errorf("remove the previous demo: %w", err)
	} else if n > 0 {
		fmt.Fprintf(w, "removed %d item(s) of a previous demo run\n", n)
	}
	dir, err := s.spawnCwd("")
	if err != nil {
		return nil, err
	}
	var out []demoStarted
	failedJob := 0
	for _, it := range demo.Workload() {
		switch it.Kind {
		case demo.Process:
			h, err := s.Runtime.Spawn(ctx, seam.SpawnSpec{Argv: it.Argv, Cwd: dir, Grace: s.grace(), Tag: it.Tag(),
				Stdio: seam.Stdio{Stdin: seam.StdinIgnore(),
					Stdout: seam.KeptOutput(), Stderr: seam.KeptOutput()}})
			if err != nil {
				return out, fmt.Errorf("demo %s: %w", it.Name, err)
			}
			out = append(out, demoStarted{it, h.Pgid()})
			// Let go at once, the job that finishes too: a handle followed
			// to the end takes the output it holds in memory as the result
			// and withdraws the spill, and 'logs' and the TUI would find
			// nothing kept. The TUI may also run in this process.
			h.Detach()
			if it.Finishes {
				failedJob = h.Pgid() // waited for below
			}
			fmt.Fprintf(w, "started %-10s pgid %-7d %s\n", it.Name, h.Pgid(), it.What)
		case demo.Terminal:
			t, err := s.Runtime.SpawnTerminal(ctx, seam.TerminalSpec{Argv: it.Argv, Cwd: dir,
				Env: map[string]string{"TERM": "xterm-256color"}, Rows: 30, Cols: 100, Grace: s.grace(), Tag: it.Tag()})
			if err != nil {
				if it.Optional {
					fmt.Fprintf(w, "skipped %-10s (%v)\n", it.Name, oneLine(err.Error()))
					continue
				}
				return out, fmt.Errorf("demo %s: %w", it.Name, err)
			}
			out = append(out, demoStarted{it, t.Pid()})
			fmt.Fprintf(w, "started %-10s pid  %-7d %s\n", it.Name, t.Pid(), it.What)
		}
	}
	if failedJob != 0 {
		if err := awaitSettled(ctx, s, failedJob, demoFinishWait); err != nil {
			return out, err
		}
	}
	return out, nil
}

// awaitSettled waits, up to limit, for group pgid to have no live member
// left, as the listing ('sandtop ls') sees it. Past the limit it gives up
// quietly: the demo's check says what is wrong.
func awaitSettled(ctx context.Context, s *connection, pgid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if g, err := s.groupByPgid(ctx, pgid); err == nil && !g.Live() {
			return nil
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// removeOldDemo tears down the live groups and terminals a previous demo
// run tagged (the tags live in the sandbox). It returns how many it removed.
func removeOldDemo(ctx context.Context, s *connection) (int, error) {
	isDemo := func(tag string) bool { return strings.HasPrefix(tag, demo.TagPrefix) }
	n := 0
	snap, err := s.Runtime.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return n, err
	}
	for _, t := range snap.Terminals {
		if t.Sandtop && isDemo(t.Tag) {
			if err := terminateTerminal(ctx, s, t.PID); err != nil {
				return n, err
			}
			n++
		}
	}
	for _, g := range snap.Groups {
		if g.Origin != sandbox.OriginSandtop || g.StateDir == "" || !isDemo(g.Tag) {
			continue
		}
		if g.Live() {
			if err := s.Runtime.TeardownGroup(ctx, g.PGID, time.Second, nil); err != nil {
				return n, err
			}
		}
		// The finished job's state dir stays behind; drop it so ls does
		// not show two failed migrations.
		_ = s.Runtime.RemoveGroupState(ctx, g.StateDir)
		n++
	}
	return n, nil
}

// verifyDemo checks, through the same listing as "sandtop ls", that every
// started item is there in the expected state, then prints the listing.
func verifyDemo(ctx context.Context, s *connection, w io.Writer, started []demoStarted) error {
	doc, err := listSandbox(ctx, s, time.Now)
	if err != nil {
		return err
	}
	groups := map[int]listGroup{}
	for _, g := range doc.Groups {
		if _, seen := groups[g.PGID]; !seen || g.State != "settled" {
			groups[g.PGID] = g
		}
	}
	terms := map[int]bool{}
	for _, t := range doc.Terminals {
		terms[t.PID] = true
	}
	var problems []string
	for _, st := range started {
		it := st.item
		switch {
		case it.Kind == demo.Terminal && !terms[st.id]:
			problems = append(problems, fmt.Sprintf("terminal %s (pid %d) is not listed", it.Name, st.id))
		case it.Kind == demo.Process && it.Finishes:
			g, ok := groups[st.id]
			if !ok || g.State != "settled" || g.ExitCode == nil || *g.ExitCode != 3 {
				problems = append(problems, fmt.Sprintf("%s (pgid %d) should have finished with exit code 3: %+v", it.Name, st.id, g))
			}
		case it.Kind == demo.Process:
			if g, ok := groups[st.id]; !ok || g.State != "running" {
				problems = append(problems, fmt.Sprintf("%s (pgid %d) should be running (state %q)", it.Name, st.id, g.State))
			}
		}
	}
	fmt.Fprintln(w)
	printListTable(w, doc, false, true, time.Now())
	if len(problems) > 0 {
		return fmt.Errorf("demo check failed: %s", strings.Join(problems, "; "))
	}
	fmt.Fprintf(w, "\ndemo ok: %d items verified on %s; 'sandtop' opens the TUI, 'sandtop daemon stop' ends it all\n", len(started), s.Target.Name)
	return nil
}
