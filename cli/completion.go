package cli

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sandtop/config"
	"sandtop/themes"
)

// Dynamic shell completion (cobra's __complete): pgids and pids come from a
// listing of the sandbox the command line names, so "sandtop kill <tab>"
// offers the live groups with what they run.

// completionTimeout bounds the listing a completion makes: a shell must
// not hang on an unreachable sandbox.
const completionTimeout = 3 * time.Second

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// fixedCompletion offers a fixed list of values.
func fixedCompletion(values ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// liveGroups lists the live groups' pgids, each with its command as the
// description; nil when the sandbox cannot be reached in time. Once the
// word being completed has a SANDBOX/ (as ls -A names sandboxes), they
// are that sandbox's, as SANDBOX/PGID.
func liveGroups(cmd *cobra.Command, f *factory, toComplete string) []string {
	sandbox, prefix := completedSandbox(toComplete)
	doc, ok := completionListing(cmd, f, sandbox)
	if !ok {
		return nil
	}
	var out []string
	for _, grp := range doc.Groups {
		if grp.State == "settled" || grp.State == "unpublished" || grp.PGID <= 1 {
			continue
		}
		out = append(out, prefix+strconv.Itoa(grp.PGID)+"\t"+clip(strings.Join(grp.Command, " "), 50))
	}
	return out
}

// liveProcesses lists the pids of live members and of terminals.
func liveProcesses(cmd *cobra.Command, f *factory, terminalsOnly bool) []string {
	doc, ok := completionListing(cmd, f, "")
	if !ok {
		return nil
	}
	var out []string
	for _, t := range doc.Terminals {
		out = append(out, strconv.Itoa(t.PID)+"\tterminal "+clip(strings.Join(t.Argv, " "), 40))
	}
	if terminalsOnly {
		return out
	}
	for _, grp := range doc.Groups {
		for _, m := range grp.Members {
			if !m.Wrapper {
				out = append(out, strconv.Itoa(m.PID)+"\t"+clip(strings.Join(m.Argv, " "), 50))
			}
		}
	}
	return out
}

// completedSandbox is the SANDBOX of a SANDBOX/PGID being completed, and
// the prefix its candidates take.
func completedSandbox(toComplete string) (sandbox, prefix string) {
	if i := strings.LastIndexByte(toComplete, '/'); i > 0 {
		return toComplete[:i], toComplete[:i+1]
	}
	return "", ""
}

// completionListing lists the sandbox named ("" for the command's own).
func completionListing(cmd *cobra.Command, f *factory, sandbox string) (listDoc, bool) {
	if f.bind != nil {
		f.bind(cmd)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	s, err := f.ConnectionIn(ctx, sandbox)
	if err != nil {
		cobra.CompDebugln("sandtop: "+err.Error(), true)
		return listDoc{}, false
	}
	defer s.Close()
	doc, err := listSandbox(ctx, s, f.Now)
	if err != nil {
		cobra.CompDebugln("sandtop: "+err.Error(), true)
		return listDoc{}, false
	}
	return doc, true
}

// pgidArgs completes every argument with a live pgid.
func pgidArgs(f *factory) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return liveGroups(cmd, f, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// signalNameCompletion offers the signals by name, TERM first.
func signalNameCompletion() []string {
	out := []string{"TERM", "INT", "HUP", "KILL", "STOP", "CONT", "USR1", "USR2", "QUIT"}
	for _, n := range signalNames() {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// themeCompletion offers the embedded and the user's themes.
func themeCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return themes.NamesIn(themes.UserDir(os.Getenv)), cobra.ShellCompDirectiveNoFileComp
}

// targetCompletion offers "local" and the config's targets.
func targetCompletion(g *globalFlags) completeFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		cfg, err := g.loadConfig()
		if err != nil {
			return []string{config.LocalTarget}, cobra.ShellCompDirectiveNoFileComp
		}
		names := append([]string{config.LocalTarget}, cfg.TargetNames()...)
		sort.Strings(names[1:])
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
