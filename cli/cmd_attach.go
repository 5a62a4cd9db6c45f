package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
)

// defaultDetachKey matches the TUI's default detach binding.
const defaultDetachKey = "ctrl+]"

// attachOptions is what "sandtop attach" was asked for.
type attachOptions struct {
	pid int // the terminal's
	// keepSize leaves the terminal at this screen's size after a detach;
	// by default it gets back the size it had before the attach.
	keepSize bool
}

func newAttachCmd(f *factory) *cobra.Command {
	var opts attachOptions
	cmd := &cobra.Command{
		Use:   "attach PID",
		Short: "Take over a terminal full-screen, like tmux attach (detach with Ctrl-])",
		Long: `Connects this terminal to a sandbox terminal: recent output is replayed,
then everything you type goes to the program, Ctrl-C included, and window
size changes follow you. The detach key (Ctrl-] unless [keys] detach says
otherwise) leaves the program running, at the size it had before the attach
(--keep-size leaves it at yours). With --read-only, input is refused.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return liveProcesses(cmd, f, true), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := parsePositiveID("pid", args[0])
			if err != nil {
				return err
			}
			opts.pid = pid
			return runAttach(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.keepSize, "keep-size", false, "leave the terminal at this screen's size after detaching (by default it gets its previous size back)")
	return cmd
}

// runAttach hands f's streams to the terminal opts.pid until the detach
// key, the program's end, or ctx.
func runAttach(ctx context.Context, f *factory, opts attachOptions) error {
	s, err := f.MutableConnection(ctx, "attach (attaching sends input)")
	if err != nil {
		return err
	}
	defer s.Close()
	rows, cols := terminalSize(ctx, s, opts.pid)
	t, err := s.Runtime.AttachTerminal(ctx, opts.pid)
	if err != nil {
		return fmt.Errorf("attach %d: %w", opts.pid, err)
	}
	err = attachTo(ctx, f, s, t)
	// Other clients of the terminal find it as they left it.
	select {
	case <-t.Done():
	default:
		if !opts.keepSize && rows > 0 && cols > 0 {
			_ = t.Resize(ctx, rows, cols)
		}
	}
	return err
}

// terminalSize is the terminal's size before an attach changes it, from
// one snapshot; 0, 0 when it cannot tell.
func terminalSize(ctx context.Context, s *connection, pid int) (rows, cols int) {
	snap, err := s.Runtime.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return 0, 0
	}
	for _, t := range snap.Terminals {
		if t.PID == pid {
			return t.Rows, t.Cols
		}
	}
	return 0, 0
}

// attachTo runs the attach loop on a terminal and says how it ended. It
// never terminates the terminal.
func attachTo(ctx context.Context, f *factory, s *connection, t *seam.Terminal) error {
	keyName := defaultDetachKey
	if keys := s.cfg.Keys["detach"]; len(keys) > 0 {
		keyName = keys[0]
	}
	detach, err := parseDetachKey(keyName)
	if err != nil {
		return err
	}
	out := f.Out
	end, err := attachLoop(ctx, t, f.In, out, detach, keyName, t.Pid())
	if err != nil {
		return err
	}
	switch end {
	case endExited:
		o, oerr := t.Outcome()
		if oerr != nil {
			fmt.Fprintf(out, "\r\n[sandtop] terminal %d ended\r\n", t.Pid())
			return nil
		}
		fmt.Fprintf(out, "\r\n[sandtop] terminal %d ended: %s\r\n", t.Pid(), o)
	default:
		fmt.Fprintf(out, "\r\n[sandtop] detached; terminal %d keeps running (sandtop attach %d)\r\n", t.Pid(), t.Pid())
	}
	return nil
}
