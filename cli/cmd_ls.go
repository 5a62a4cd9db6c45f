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
)

// lsOptions is what "sandtop ls" was asked for.
type lsOptions struct {
	output    string // -o: one of listFormats
	filter    listFilter
	noHeaders bool
}

func newLsCmd(f *factory) *cobra.Command {
	var opts lsOptions
	c := &cobra.Command{
		Use:   "ls",
		Short: "List the sandbox's process groups and terminals",
		Long: `Lists the sandbox's process groups (what sandtop and coding agents started,
finished ones included) with their live processes, then the terminals.

  -o wide   adds the pids, the state directory, age, CPU and memory
  -o name   prints only pgids, one a line, for scripts:
            sandtop kill $(sandtop ls -o name --tag build)
  -o json   a stable document, described in the README`,
		Example: `  sandtop ls --state running
  sandtop ls --tag 'ci-*' -o wide --no-headers`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLs(cmd.Context(), f, opts)
		},
	}
	c.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: "+strings.Join(listFormats, ", "))
	c.Flags().BoolVar(&opts.noHeaders, "no-headers", false, "leave out the header lines of the tables")
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
	switch {
	case !headers:
	case wide:
		fmt.Fprintln(tw, "PGID\tSTATE\tEXIT\tTAG\tAGE\tCPU%\tRSS\tPIDS\tID\tCOMMAND")
	default:
		fmt.Fprintln(tw, "PGID\tSTATE\tEXIT\tTAG\tPROCS\tCOMMAND")
	}
	for _, g := range doc.Groups {
		exit := "-"
		switch {
		case g.Signal != "":
			exit = g.Signal
		case g.ExitCode != nil:
			exit = strconv.Itoa(*g.ExitCode)
		case g.Problem != "" && g.State == string(seam.GroupSettled):
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
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.PGID, g.State, exit, dash(g.Tag), age, usage, mem, dash(strings.Join(pids, ",")), g.ID, clip(cmdline, 120))
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", g.PGID, g.State, exit, dash(g.Tag), len(pids), clip(cmdline, 60))
		}
		if exit == "unknown" {
			fmt.Fprintf(tw, "  └ %s\t\t\t\t\t\n", clip(g.Problem, 100))
		}
		// Escapees sit under their group, marked, with their own pid.
		for _, e := range g.Escapees {
			fmt.Fprintf(tw, "  └ %d\tescapee\t\t\t\t%s\n", e.PID, clip(strings.Join(e.Argv, " "), 60))
		}
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
		fmt.Fprintln(tw, "TERMINAL\tSIZE\tFOREGROUND\tINPUT\tTAG\tCOMMAND")
	}
	for _, t := range doc.Terminals {
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", t.PID, size, fg, input, dash(t.Tag), clip(strings.Join(t.Argv, " "), 60))
	}
	tw.Flush()
}

// wrapped counts the live groups the bash wrapper supervises.
func wrapped(groups []listGroup) int {
	n := 0
	for _, g := range groups {
		if g.Supervisor == seam.SupervisorWrapper {
			n++
		}
	}
	return n
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens s to n runes and makes it one line, for table cells.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
