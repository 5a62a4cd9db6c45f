package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// lsOptions is what "sandtop ls" was asked for.
type lsOptions struct {
	output    string // -o: one of listFormats
	filter    listFilter
	noHeaders bool
	// all is -A: every sandbox (ls_all.go).
	all bool
	// allGroups is --all: -o name lists finished groups too.
	allGroups bool
	// watch is -w: print the listing, then a line per change (ls_watch.go).
	watch bool
}

func newLsCmd(f *factory) *cobra.Command {
	var opts lsOptions
	c := &cobra.Command{
		Use:   "ls",
		Short: "List the sandbox's process groups and terminals",
		Long: `Lists the sandbox's process groups (what sandtop and coding agents started,
finished ones included) with their live processes, then the terminals.

  -o wide   adds the pids, the state directory, age, CPU and memory
  -o name   prints only the live groups' pgids, one a line, for scripts
            (--all: finished ones too; --state: those in that state):
            sandtop kill $(sandtop ls -o name --tag build)
  -o json   a stable document, described in the README

With -w it prints the listing, then, as kubectl get -w does, a row for
each group or terminal that appears or changes, until Ctrl-C or SIGTERM
(with -o json: one group or terminal a line, compact).

With -A it lists every sandbox: the local one, each config target, and
those the target flags add (--e2b: every E2B sandbox, --e2b-metadata the
matching ones), at most 16 at once, in one table with a SANDBOX column.
A sandbox that cannot be listed is a row of its own (an "error" in JSON);
the others are still listed, and ls then exits 1. -o name prints
SANDBOX/PGID, which kill, signal and logs take.`,
		Example: `  sandtop ls --state running
  sandtop ls -A --e2b
  sandtop ls --tag 'ci-*' -o wide --no-headers
  sandtop ls -w`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLs(cmd.Context(), f, opts)
		},
	}
	c.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: "+strings.Join(listFormats, ", "))
	c.Flags().BoolVar(&opts.noHeaders, "no-headers", false, "leave out the header lines of the tables")
	c.Flags().BoolVarP(&opts.all, "all-sandboxes", "A", false, "every sandbox: local, the config's targets and those the target flags add (--e2b: every E2B sandbox), with a SANDBOX column")
	c.Flags().BoolVar(&opts.allGroups, "all", false, "with -o name: finished groups too, not only live ones")
	c.Flags().BoolVarP(&opts.watch, "watch", "w", false, "after the listing, print a row for each change until interrupted")
	opts.filter.register(c)
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion(listFormats...))
	return c
}

// runLs lists the sandbox's groups and terminals in the chosen format.
func runLs(ctx context.Context, f *factory, opts lsOptions) error {
	if err := checkOutputFormat(opts.output, listFormats...); err != nil {
		return err
	}
	if err := opts.filter.check(); err != nil {
		return err
	}
	// What kill and signal can act on: a finished group's pgid in a
	// script's $(...) would only be reported missing.
	opts.filter.liveOnly = opts.output == "name" && !opts.allGroups && opts.filter.state == ""
	if opts.watch && opts.all {
		return usagef(errors.New("--watch follows one sandbox; leave out -A"))
	}
	if opts.all {
		return runLsAll(ctx, f, opts)
	}
	r, err := f.Resolve(ctx)
	if err != nil {
		return err
	}
	var doc listDoc
	if r.E2B != nil && r.E2B.Paused() {
		// Dialling a paused sandbox could wake it: say what it is and
		// list nothing.
		doc = listDoc{Version: jsonVersion, Target: r.Name, Taken: f.Now().UTC(), Groups: []listGroup{}, Terminals: []listTerminal{}}
		fmt.Fprintf(f.ErrOut, "sandtop: %s is paused; nothing runs in it until it is resumed (sandtop e2b resume %s)\n", r.Name, r.SandboxID)
	} else {
		s, err := f.Open(ctx, r)
		if err != nil {
			return err
		}
		defer s.Close()
		if doc, err = listSandbox(ctx, s, f.Now); err != nil {
			return err
		}
		if opts.watch {
			doc.E2B = e2bListEntry(r.E2B)
			return watchList(ctx, f, s, opts, opts.filter.apply(doc))
		}
	}
	doc.E2B = e2bListEntry(r.E2B)
	doc = opts.filter.apply(doc)
	switch opts.output {
	case "json":
		return writeJSON(f.Out, doc)
	case "name":
		for _, g := range doc.Groups {
			fmt.Fprintln(f.Out, g.PGID)
		}
		return nil
	}
	if r.E2B != nil && !opts.noHeaders {
		fmt.Fprintln(f.Out, e2bSummary(r.Name, *r.E2B, f.Now()))
	}
	printListTable(f.Out, doc, opts.output == "wide", !opts.noHeaders, f.Now())
	return nil
}

// listFormats are the -o values of ls.
var listFormats = []string{"table", "wide", "name", "json"}

func printListTable(w io.Writer, doc listDoc, wide, headers bool, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if headers {
		fmt.Fprintln(tw, groupHeader(wide))
	}
	for _, g := range doc.Groups {
		writeGroupRows(tw, g, wide, now, "")
	}
	tw.Flush()
	if n := wrapped(doc.Groups); n > 0 && headers {
		fmt.Fprintf(w, "note: %d live group(s) run under the bash wrapper: this sandbox could not run sandtop's supervisor (see \"supervisor\" in -o json)\n", n)
	}
	if len(doc.Terminals) == 0 {
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if headers {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, terminalHeader)
	}
	for _, t := range doc.Terminals {
		writeTerminalRow(tw, t, "")
	}
	tw.Flush()
}

// wrapped counts the live groups the bash wrapper supervises.
func wrapped(groups []listGroup) int {
	n := 0
	for _, g := range groups {
		if g.Supervisor == sandbox.SupervisorWrapper {
			n++
		}
	}
	return n
}

func groupHeader(wide bool) string {
	if wide {
		return "PGID\tSTATE\tEXIT\tTAG\tAGE\tCPU%\tRSS\tPIDS\tID\tCOMMAND"
	}
	return "PGID\tSTATE\tEXIT\tTAG\tPROCS\tCOMMAND"
}

const terminalHeader = "TERMINAL\tSIZE\tFOREGROUND\tINPUT\tTAG\tCOMMAND"

// writeGroupRows writes a group's row and the lines under it (why its exit
// is unknown, its escapees); prefix is the cells before (ls -A's SANDBOX).
func writeGroupRows(tw io.Writer, g listGroup, wide bool, now time.Time, prefix string) {
	under := ""
	if prefix != "" {
		under = "\t"
	}
	exit := "-"
	switch {
	case g.Signal != "":
		exit = g.Signal
	case g.ExitCode != nil:
		exit = strconv.Itoa(*g.ExitCode)
	case g.Problem != "" && g.State == string(groupstate.Settled):
		exit = "unknown"
	}
	cmdline := strings.Join(g.Command, " ")
	var pids []string
	var cpu float64
	var rss uint64
	for _, m := range g.Members {
		cpu, rss = cpu+m.CPUPercent, rss+m.RSSBytes
		if !m.Wrapper {
			pids = append(pids, strconv.Itoa(m.PID))
		}
	}
	if wide {
		age, usage, mem := "-", "-", "-"
		if g.Started != nil {
			age = shortAge(now.Sub(*g.Started))
		}
		if len(g.Members) > 0 && rss > 0 {
			usage, mem = strconv.FormatFloat(cpu, 'f', 1, 64), shortBytes(rss)
		}
		fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", prefix, g.PGID, g.State, exit, dash(g.Tag), age, usage, mem, dash(strings.Join(pids, ",")), dash(g.ID), clip(cmdline, 120))
	} else {
		fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%d\t%s\n", prefix, g.PGID, g.State, exit, dash(g.Tag), len(pids), clip(cmdline, 60))
	}
	if exit == "unknown" {
		// Under COMMAND, the last column: in the first it widened PGID.
		columns := 6
		if wide {
			columns = 10
		}
		fmt.Fprintf(tw, "%s%s└ %s\n", under, strings.Repeat("\t", columns-1), clip(g.Problem, 100))
	}
	// Escapees sit under their group, marked, with their own pid.
	for _, e := range g.Escapees {
		fmt.Fprintf(tw, "%s  └ %d\tescapee\t\t\t\t%s\n", under, e.PID, clip(strings.Join(e.Argv, " "), 60))
	}
}

func writeTerminalRow(tw io.Writer, t listTerminal, prefix string) {
	size, fg, input := "-", "-", "-"
	if t.Rows > 0 {
		size = fmt.Sprintf("%dx%d", t.Cols, t.Rows)
	}
	if t.ForegroundPGID > 0 {
		fg = strconv.Itoa(t.ForegroundPGID)
		input = "busy"
		if t.InputWaiting {
			input = "waiting"
		}
	}
	fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%s\t%s\n", prefix, t.PID, size, fg, input, dash(t.Tag), clip(strings.Join(t.Argv, " "), 60))
}

// dash is a table cell for s, cleaned (it may come from the sandbox), or
// "-" when s is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return safetext.Line(s)
}

// clip shortens s to n runes and makes it one line without control
// characters, for table cells.
func clip(s string, n int) string { return safetext.Clip(s, n) }
