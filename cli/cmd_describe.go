package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// describeDoc is what "sandtop describe -o json" prints: the group as ls
// -o json has it, and what only one group's page shows.
type describeDoc struct {
	Version int            `json:"version"`
	Target  string         `json:"target"`
	Taken   time.Time      `json:"taken"`
	Group   describedGroup `json:"group"`
}

type describedGroup struct {
	listGroup
	// StateDir is the group's state directory in the sandbox.
	StateDir string `json:"state_dir,omitempty"`
	// Cwd is the program's working directory, as its supervisor published
	// it; absent when it did not (the bash wrapper, an older sandtop).
	Cwd string `json:"cwd,omitempty"`
	SID int    `json:"sid,omitempty"`
	// LeaderPID is the pid the daemon started for the group (its output
	// can be streamed); absent when the daemon did not start it.
	LeaderPID int  `json:"leader_pid,omitempty"`
	PTY       bool `json:"pty,omitempty"`
	// LastOutput is when it last wrote to its spill files.
	LastOutput *time.Time `json:"last_output,omitempty"`
	// Ended is when its exit status was published (the files' times, so
	// absent on stock envd).
	Ended *time.Time `json:"ended,omitempty"`
}

func newDescribeCmd(f *factory) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "describe [SANDBOX/]PGID [-o text|json]",
		Short: "Show everything known about one process group",
		Long: `Shows one process group in full, as kubectl describe does: its whole argv,
working directory, tag, origin, state directory, start time, supervisor,
exit facts (code, signal, or why they are unknown), why it looks stuck,
and each live member with its state, CPU and memory.
SANDBOX/PGID names a group in another sandbox than the one the target
flags select, SANDBOX as 'sandtop ls -A' prints it.`,
		Example: `  sandtop describe 4123
  sandtop describe -o json e2b:isb7x2k/812 | jq .group.cwd`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: pgidArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output, "text", "json"); err != nil {
				return err
			}
			ref, err := parseGroupRef("pgid", args[0])
			if err != nil {
				return err
			}
			return runDescribe(cmd.Context(), f, ref, output)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("text", "json"))
	return c
}

// runDescribe finds the group in one snapshot of its sandbox (a live one
// before a finished one of the same pgid) and prints it.
func runDescribe(ctx context.Context, f *factory, ref groupRef, output string) error {
	s, err := f.ConnectionIn(ctx, ref.sandbox)
	if err != nil {
		return err
	}
	defer s.Close()
	snap, err := s.Runtime.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return err
	}
	var g *sandbox.Group
	for i := range snap.Groups {
		if c := &snap.Groups[i]; c.PGID == ref.pgid && (g == nil || !g.Live() && c.Live()) {
			g = c
		}
	}
	if g == nil {
		if ref.sandbox != "" {
			return fmt.Errorf("no process group %d in sandbox %s (see 'sandtop ls -A')", ref.pgid, ref.sandbox)
		}
		return errNoGroup(ref.pgid)
	}
	doc := describeDoc{Version: jsonVersion, Target: s.Target.Name, Taken: f.Now().UTC()}
	one := listSnapshot(listDoc{Groups: []listGroup{}}, sandbox.Snapshot{Groups: []sandbox.Group{*g}})
	if len(one.Groups) == 1 {
		doc.Group.listGroup = one.Groups[0]
	} else { // a group nobody published: what the table shows
		doc.Group.listGroup = listGroup{PGID: g.PGID, Origin: string(g.Origin), State: string(g.State),
			Command: g.Argv, Members: listProcesses(g.Members), Stuck: g.Stuck}
	}
	if doc.Group.Command == nil {
		if l := g.Leader(); l != nil {
			doc.Group.Command = l.Argv
		}
	}
	doc.Group.StateDir, doc.Group.SID, doc.Group.LeaderPID, doc.Group.PTY = g.StateDir, g.SID, g.LeaderPID, g.PTY
	if !g.OutputAt.IsZero() {
		t := g.OutputAt
		doc.Group.LastOutput = &t
	}
	details, err := s.Runtime.GroupDetails(ctx, g.StateDir)
	if err != nil {
		return err
	}
	doc.Group.Cwd = details.Cwd
	if doc.Group.Started == nil && !details.Started.IsZero() {
		doc.Group.Started = &details.Started // a finished group's: no member tells
	}
	if !details.Ended.IsZero() {
		doc.Group.Ended = &details.Ended
	}
	if output == "json" {
		return writeJSON(f.Out, doc)
	}
	printDescribe(f.Out, doc, f.Now())
	return nil
}

// printDescribe writes the group as labelled lines, then its members.
func printDescribe(w io.Writer, doc describeDoc, now time.Time) {
	g := doc.Group
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	field := func(label, value string) { fmt.Fprintf(tw, "%s:\t%s\n", label, value) }
	field("PGID", strconv.Itoa(g.PGID))
	field("Sandbox", dash(doc.Target))
	field("State", g.State)
	field("Origin", dash(g.Origin))
	field("Tag", dash(g.Tag))
	field("Command", dash(quoteArgv(g.Command)))
	field("Cwd", dash(g.Cwd))
	field("State dir", dash(g.StateDir))
	started := "-"
	if g.Started != nil {
		started = g.Started.UTC().Format(time.RFC3339) + " (" + shortAge(now.Sub(*g.Started)) + " ago)"
	}
	field("Started", started)
	if g.LastOutput != nil {
		field("Last output", g.LastOutput.UTC().Format(time.RFC3339)+" ("+shortAge(now.Sub(*g.LastOutput))+" ago)")
	}
	field("Supervisor", dash(g.Supervisor))
	if g.SID > 0 {
		field("Session", strconv.Itoa(g.SID))
	}
	if g.Ended != nil {
		field("Ended", g.Ended.UTC().Format(time.RFC3339)+" ("+shortAge(now.Sub(*g.Ended))+" ago)")
	}
	field("Exit", exitFacts(g.listGroup))
	field("Stuck", dash(g.Stuck))
	tw.Flush()
	if len(g.Command) > 1 {
		fmt.Fprintln(w, "Argv:")
		for i, a := range g.Command {
			fmt.Fprintf(w, "  [%d] %s\n", i, strconv.Quote(a))
		}
	}
	printProcesses(w, "Members", g.Members)
	printProcesses(w, "Escapees", g.Escapees)
}

// exitFacts says how the direct command ended, or why that is unknown.
func exitFacts(g listGroup) string {
	switch {
	case g.Signal != "":
		return "killed by " + g.Signal
	case g.ExitCode != nil:
		return "exit code " + strconv.Itoa(*g.ExitCode)
	case g.Problem != "":
		return "unknown: " + safetext.Clip(g.Problem, 300)
	case groupstate.State(g.State).Live():
		return "- (still running)"
	}
	return "-"
}

// quoteArgv is argv as a shell would read it back.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
			return !(r == '/' || r == '-' || r == '_' || r == '.' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func printProcesses(w io.Writer, title string, ps []listProcess) {
	if len(ps) == 0 {
		if title == "Members" {
			fmt.Fprintln(w, "Members: none live")
		}
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PID\tPPID\tSTATE\tCPU%\tRSS\tSTARTED\tCOMMAND")
	for _, p := range ps {
		cpu, rss, started := "-", "-", "-"
		if p.RSSBytes > 0 {
			cpu, rss = strconv.FormatFloat(p.CPUPercent, 'f', 1, 64), shortBytes(p.RSSBytes)
		}
		if p.Started != nil {
			started = p.Started.UTC().Format(time.RFC3339)
		}
		cmd := clip(strings.Join(p.Argv, " "), 200)
		if p.Wrapper {
			cmd += " (supervisor)"
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\n", p.PID, p.PPID, processState(p.State), cpu, rss, started, dash(cmd))
	}
	tw.Flush()
}

// processState spells out /proc's state letter.
func processState(s string) string {
	names := map[string]string{"R": "running", "S": "sleeping", "D": "disk wait", "T": "stopped", "t": "traced",
		"Z": "zombie", "X": "dead", "I": "idle"}
	if n, ok := names[s]; ok {
		return s + " (" + n + ")"
	}
	return dash(s)
}
