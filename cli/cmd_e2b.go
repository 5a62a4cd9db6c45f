package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sandtop/backend/e2b"
	"sandtop/backend/target"
	"sandtop/safetext"
	"sandtop/ui"
)

// "sandtop e2b …": the E2B sandboxes themselves, as E2B's control plane
// knows them. ls and logs only look; resume and extend are the only
// commands in sandtop that change a sandbox's lifecycle, and each asks
// first and is refused read-only.

func newE2BCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "e2b",
		Short: "E2B sandboxes: list them, read their logs, resume or extend them",
		Long: `Works on E2B's control plane with E2B_API_KEY (E2B_API_URL and E2B_DOMAIN as
E2B's SDKs read them), or with the key file, domain and API URL of the
config target named by --target. Looking (ls, logs, and every other
sandtop command) never resumes a paused sandbox or extends a running one;
resume and extend do, after asking.`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newE2BLsCmd(g), newE2BLogsCmd(g), newE2BLifecycleCmd(g, "resume"), newE2BLifecycleCmd(g, "extend"))
	return c
}

// e2bClient builds the control-plane client: from the config target that
// --target names if it is an E2B one, else from the environment. It also
// says whether that target is read-only and which metadata filter applies.
// A target flag naming anything but E2B sandboxes is refused, not ignored
// ($SANDTOP_TARGET, a default, is passed over when it is not E2B).
func e2bClient(g *globalFlags) (*e2b.Client, target.Config, bool, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, target.Config{}, false, err
	}
	sels, err := g.target.resolveAll(cfg)
	if err != nil {
		return nil, target.Config{}, false, err
	}
	tc, readOnly := target.Config{}, cfg.ReadOnly
	var chosen *selection
	for i, s := range sels {
		switch {
		case s.fromEnv && !s.isE2B():
		case !s.isE2B():
			return nil, tc, false, usagef(fmt.Errorf("the e2b commands work on E2B's control plane; %s is not an E2B target", s.name))
		case chosen != nil:
			return nil, tc, false, usagef(fmt.Errorf("the e2b commands take one E2B selection; got %s and %s", chosen.name, s.name))
		default:
			chosen = &sels[i]
		}
	}
	if chosen != nil {
		tc, readOnly = chosen.cfg, chosen.readOnly
		if chosen.e2bKeyFile != "" {
			if tc.E2BConfig.APIKey, err = readAPIKey(chosen.e2bKeyFile); err != nil {
				return nil, tc, false, err
			}
		}
	}
	tc.Warn = warnOnce
	client, err := target.E2BClient(tc)
	return client, tc, readOnly || g.readOnly, err
}

// checkE2BArg refuses a selection that contradicts the sandbox an e2b
// subcommand was given as its argument: another --e2b=ID, or a metadata
// filter, which has nothing to filter there.
func checkE2BArg(tc target.Config, id string) error {
	switch {
	case tc.E2BSandboxID != "" && tc.E2BSandboxID != id:
		return usagef(fmt.Errorf("--e2b=%s and the argument %s name different sandboxes", tc.E2BSandboxID, id))
	case tc.E2BMetadata != nil:
		return usagef(errors.New("--e2b-metadata filters listings; this command takes one sandbox ID"))
	}
	return nil
}

type e2bListDoc struct {
	Version   int          `json:"version"`
	Sandboxes []e2bListRow `json:"sandboxes"`
}

type e2bListRow struct {
	ID         string            `json:"id"`
	TemplateID string            `json:"template_id"`
	Alias      string            `json:"alias,omitempty"`
	State      string            `json:"state"` // running or paused
	StartedAt  time.Time         `json:"started_at"`
	EndAt      time.Time         `json:"end_at"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	CPUCount   int               `json:"cpu_count"`
	MemoryMB   int               `json:"memory_mb"`
}

func newE2BLsCmd(g *globalFlags) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "ls",
		Short: "List the team's sandboxes, running and paused, with alias, state, CPUs, memory, time left and metadata",
		Long: `Lists the team's sandboxes (one GET; nothing is resumed or extended).
--e2b-metadata KEY=VALUE (repeatable) keeps those whose metadata has every
pair, as E2B's CLI does. -o json prints a stable document.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputFormat(out, "table", "json"); err != nil {
				return err
			}
			client, tc, _, err := e2bClient(g)
			if err != nil {
				return err
			}
			sbs, err := client.List(cmd.Context(), e2b.ListOptions{Metadata: tc.E2BMetadata})
			if err != nil {
				return err
			}
			if id := tc.E2BSandboxID; id != "" { // --e2b=ID (or a target naming one): that one only
				sbs = slices.DeleteFunc(sbs, func(sb e2b.Sandbox) bool { return sb.ID != id })
				if len(sbs) == 0 {
					return fmt.Errorf("e2b: no sandbox %s in the team", id)
				}
			}
			doc := e2bListDoc{Version: jsonVersion, Sandboxes: []e2bListRow{}}
			for _, sb := range sbs {
				doc.Sandboxes = append(doc.Sandboxes, *e2bListEntry(&sb))
			}
			if out == "json" {
				return writeJSON(cmd.OutOrStdout(), doc)
			}
			printE2BTable(cmd.OutOrStdout(), sbs, time.Now())
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "table", "output format: table or json")
	return c
}

func printE2BTable(w io.Writer, sbs []e2b.Sandbox, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tTEMPLATE\tSTATE\tCPU\tRAM\tLEFT\tMETADATA")
	for _, sb := range sbs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sb.ID, clip(templateLabel(sb), 40), sb.State, cpuLabel(sb.CPUCount), memoryLabel(sb.MemoryMB),
			ui.FormatTimeLeft(sb.EndAt.Sub(now)), clip(ui.FormatMetadata(sb.Metadata), 80))
	}
	tw.Flush()
}

// cpuLabel is a sandbox's CPU count, "-" when the listing gave none.
func cpuLabel(n int) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// memoryLabel is a sandbox's memory (E2B gives MiB): whole GiB as such,
// "-" when the listing gave none.
func memoryLabel(mb int) string {
	switch {
	case mb <= 0:
		return "-"
	case mb%1024 == 0:
		return fmt.Sprintf("%d GiB", mb/1024)
	}
	return fmt.Sprintf("%d MiB", mb)
}

// templateLabel is "alias (template id)", or the id alone.
func templateLabel(sb e2b.Sandbox) string {
	if sb.Alias != "" && sb.Alias != sb.TemplateID {
		return sb.Alias + " (" + sb.TemplateID + ")"
	}
	return sb.TemplateID
}

// e2bSummary is the one line ls prints about an E2B sandbox before its
// groups.
func e2bSummary(name string, sb e2b.Sandbox, now time.Time) string {
	return safetext.Line(fmt.Sprintf("%s  %s  %s  %s left  %s", name, templateLabel(sb), sb.State, ui.FormatTimeLeft(sb.EndAt.Sub(now)), ui.FormatMetadata(sb.Metadata)))
}

func newE2BLogsCmd(g *globalFlags) *cobra.Command {
	var lines int
	var out string
	c := &cobra.Command{
		Use:   "logs ID",
		Short: "The sandbox's own log, as E2B collects it (not a process's output: see 'sandtop logs')",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(out, "text", "json"); err != nil {
				return err
			}
			if lines < 1 || lines > e2b.MaxLogLines {
				return usagef(fmt.Errorf("-n %d: want 1..%d", lines, e2b.MaxLogLines))
			}
			client, tc, _, err := e2bClient(g)
			if err != nil {
				return err
			}
			if err := checkE2BArg(tc, args[0]); err != nil {
				return err
			}
			entries, err := client.Logs(cmd.Context(), args[0], lines)
			if err != nil {
				return err
			}
			if out == "json" {
				return writeJSON(cmd.OutOrStdout(), struct {
					Version int            `json:"version"`
					Logs    []e2b.LogEntry `json:"logs"`
				}{jsonVersion, append([]e2b.LogEntry{}, entries...)})
			}
			for _, e := range entries {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %-5s %s\n", e.Time.UTC().Format(time.RFC3339), e.Level, clip(e.Message, 4000))
			}
			return nil
		},
	}
	c.Flags().IntVarP(&lines, "lines", "n", 100, "how many of the newest lines")
	c.Flags().StringVarP(&out, "output", "o", "text", "output format: text or json")
	return c
}

// newE2BLifecycleCmd is "resume" or "extend": one confirmed request.
func newE2BLifecycleCmd(g *globalFlags, verb string) *cobra.Command {
	var timeout time.Duration
	var yes bool
	short := map[string]string{
		"resume": "Resume a paused sandbox (it runs, and is billed, for --timeout)",
		"extend": "Set a running sandbox to end --timeout from now",
	}[verb]
	c := &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if timeout < time.Second {
				return usagef(fmt.Errorf("--timeout %s: want at least 1s", timeout))
			}
			client, tc, readOnly, err := e2bClient(g)
			if err != nil {
				return err
			}
			if err := checkE2BArg(tc, id); err != nil {
				return err
			}
			if readOnly {
				return fmt.Errorf("cannot %s e2b:%s: read-only (--read-only or read_only in the config)", verb, id)
			}
			sb, err := client.Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			prompt := fmt.Sprintf("%s sandbox %s (%s, %s, %s left) so that it ends %s from now?",
				verb, id, templateLabel(sb), sb.State, ui.FormatTimeLeft(time.Until(sb.EndAt)), timeout)
			if err := confirm(cmd, yes, prompt); err != nil {
				return err
			}
			if verb == "resume" {
				_, err = client.Resume(cmd.Context(), id, timeout)
			} else {
				err = client.Extend(cmd.Context(), id, timeout)
			}
			if err != nil {
				return err
			}
			after, err := client.Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), e2bSummary("e2b:"+id, after, time.Now()))
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", e2b.DefaultConnectTimeout, "how long the sandbox lives from now")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask (needed when stdin is not a terminal)")
	return c
}

// errNotConfirmed is a declined confirmation.
var errNotConfirmed = errors.New("not confirmed; nothing changed")

// confirm asks prompt on the terminal; --yes answers for a script, and
// without a terminal and without --yes nothing is changed.
func confirm(cmd *cobra.Command, yes bool, prompt string) error {
	if yes {
		return nil
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return usagef(errors.New("stdin is not a terminal: confirm with --yes"))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N] ", strings.ToUpper(prompt[:1])+prompt[1:])
	answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return errNotConfirmed
	}
	return nil
}

// e2bListEntry is the "e2b" object of "ls -o json"; nil for other kinds.
func e2bListEntry(sb *e2b.Sandbox) *e2bListRow {
	if sb == nil {
		return nil
	}
	return &e2bListRow{ID: sb.ID, TemplateID: sb.TemplateID, Alias: sb.Alias, State: sb.State,
		StartedAt: sb.StartedAt, EndAt: sb.EndAt, Metadata: sb.Metadata, CPUCount: sb.CPUCount, MemoryMB: sb.MemoryMB}
}
