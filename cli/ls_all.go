package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/kube"
	"sandtop/backend/target"
)

// "sandtop ls -A": every sandbox at once, as kubectl get pods -A lists
// every namespace. The sandboxes are the local one, every config target,
// and what the target flags add (--e2b: every E2B sandbox); each is listed
// on its own connection, at most lsAllParallel at once, and one that
// cannot be listed is a row of its own, not the end of the listing.

// lsAllParallel bounds how many sandboxes ls -A asks at once.
const lsAllParallel = 16

// lsAllTimeout bounds dialling and listing one sandbox, so one dead host
// costs its row and no more.
const lsAllTimeout = 20 * time.Second

// Sandbox states in ls -A.
const (
	sandboxListed      = "listed"
	sandboxPaused      = "paused"
	sandboxUnreachable = "unreachable"
	// sandboxNotRunning is a pod that is pending, finished or being
	// deleted: listed, not dialled, and no failure of ls.
	sandboxNotRunning = "not-running"
)

// sandboxEntry is one sandbox ls -A covers: resolved (not dialled), or
// already known paused or in error.
type sandboxEntry struct {
	name   string
	r      resolved
	paused bool
	// notRunning: a pod the daemon cannot be reached in (yet); err says why.
	notRunning bool
	err        error
	e2b        *e2b.Sandbox
	kube       *kube.Pod
}

// allSandboxes is what ls -A covers: the local sandbox and every config
// target, then the target flags' selections ($SANDTOP_TARGET, a default,
// adds nothing), each listed, and every sandbox once.
func allSandboxes(ctx context.Context, g *globalFlags) ([]sandboxEntry, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	sels, _, err := allConfigured(cfg)
	if err != nil {
		return nil, err
	}
	flagged, err := g.target.resolveAll(cfg)
	if err != nil {
		return nil, err
	}
	for _, s := range flagged {
		if !s.fromEnv {
			sels = append(sels, s)
		}
	}
	var out []sandboxEntry
	seen := map[string]bool{}
	for _, sel := range sels {
		if !sel.expands && seen[sel.name] {
			continue // --target X of a configured X
		}
		if err := g.target.applyLayout(&sel); err != nil {
			return nil, err
		}
		if g.target.user != "" && !sel.isKube() {
			sel.cfg.User = g.target.user
		}
		if sel.isKube() && sel.cfg.Kube.Namespace == "" && sel.cfg.KubePod == "" {
			// -A is every namespace too, as kubectl's -A.
			k := *sel.cfg.Kube
			k.AllNamespaces = true
			sel.cfg.Kube = &k
		}
		ts, err := sel.targets(ctx)
		if err != nil {
			name := sel.name
			if name == "extension" {
				name = "e2b"
			}
			seen[name] = true
			out = append(out, sandboxEntry{name: name, err: err})
			continue
		}
		for _, t := range ts {
			// An E2B sandbox may be listed by several selections (a config
			// team, a config target naming it, --e2b): the first names it.
			key := t.Name
			if t.SandboxID != "" {
				key = "e2b:" + t.SandboxID
			}
			if seen[t.Name] || seen[key] {
				continue
			}
			seen[t.Name], seen[key] = true, true
			e := sandboxEntry{name: t.Name, e2b: t.E2B, kube: t.Kube}
			switch {
			case errors.Is(t.Err, target.ErrPaused):
				e.paused = true
			case errors.Is(t.Err, kube.ErrNotRunning):
				e.notRunning, e.err = true, t.Err
			case t.Err != nil:
				e.err = t.Err
			default:
				e.r = resolved{Target: t, cfg: cfg, sel: sel, readOnly: sel.readOnly || g.readOnly, logger: g.logger()}
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// allListDoc is what ls -A -o json prints: every sandbox's state, then the
// groups and terminals of all of them, each naming its sandbox.
type allListDoc struct {
	Version   int            `json:"version"`
	Taken     time.Time      `json:"taken"`
	Sandboxes []sandboxRow   `json:"sandboxes"`
	Groups    []listGroup    `json:"groups"`
	Terminals []listTerminal `json:"terminals"`
}

// sandboxRow is one sandbox of ls -A: listed, paused (not dialled) or
// unreachable (Error says why).
type sandboxRow struct {
	Sandbox string       `json:"sandbox"`
	State   string       `json:"state"`
	Error   string       `json:"error,omitempty"`
	E2B     *e2bListRow  `json:"e2b,omitempty"`
	Kube    *kubeListRow `json:"kube,omitempty"`
}

// kubeListRow is a pod as the API server describes it.
type kubeListRow struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Phase     string    `json:"phase"`
	Node      string    `json:"node,omitempty"`
	IP        string    `json:"ip,omitempty"`
	Created   time.Time `json:"created"`
	Deleting  bool      `json:"deleting,omitempty"`
}

func kubeListEntry(p *kube.Pod) *kubeListRow {
	if p == nil {
		return nil
	}
	return &kubeListRow{Namespace: p.Namespace, Pod: p.Name, Phase: p.Phase, Node: p.Node, IP: p.IP, Created: p.Created.UTC(), Deleting: p.Deleting}
}

// runLsAll lists every sandbox. It prints everything it could list and
// fails (exit 1) when a sandbox could not be listed, as kubectl get does
// when part of what it was asked for failed.
func runLsAll(ctx context.Context, f *factory, opts lsOptions) error {
	if f.Sandboxes == nil {
		return usagef(errors.New("-A is not supported here"))
	}
	entries, err := f.Sandboxes(ctx)
	if err != nil {
		return err
	}
	docs := listEach(ctx, f, entries)
	all := allListDoc{Version: jsonVersion, Taken: f.Now().UTC(), Sandboxes: []sandboxRow{}, Groups: []listGroup{}, Terminals: []listTerminal{}}
	var failed []string
	for i, e := range entries {
		row := sandboxRow{Sandbox: e.name, State: sandboxListed, E2B: e2bListEntry(e.e2b), Kube: kubeListEntry(e.kube)}
		switch {
		case e.paused:
			row.State = sandboxPaused
		case e.notRunning:
			row.State, row.Error = sandboxNotRunning, oneLine(e.err.Error())
		case docs[i].err != nil:
			row.State, row.Error = sandboxUnreachable, oneLine(docs[i].err.Error())
			failed = append(failed, e.name)
		default:
			doc := opts.filter.apply(docs[i].doc)
			for _, g := range doc.Groups {
				g.Sandbox = e.name
				all.Groups = append(all.Groups, g)
			}
			for _, t := range doc.Terminals {
				t.Sandbox = e.name
				all.Terminals = append(all.Terminals, t)
			}
		}
		all.Sandboxes = append(all.Sandboxes, row)
	}
	switch opts.output {
	case "json":
		if err := writeJSON(f.Out, all); err != nil {
			return err
		}
	case "name":
		for _, g := range all.Groups {
			fmt.Fprintf(f.Out, "%s/%d\n", g.Sandbox, g.PGID)
		}
	default:
		printAllTable(f.Out, all, opts.output == "wide", !opts.noHeaders, f.Now())
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not list %d of %d sandboxes: %s", len(failed), len(entries), strings.Join(failed, ", "))
	}
	return nil
}

type listed struct {
	doc listDoc
	err error
}

// listEach lists every entry that can be dialled, lsAllParallel at once.
func listEach(ctx context.Context, f *factory, entries []sandboxEntry) []listed {
	out := make([]listed, len(entries))
	sem := make(chan struct{}, lsAllParallel)
	var wg sync.WaitGroup
	for i, e := range entries {
		if e.paused || e.err != nil {
			out[i].err = e.err
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c, cancel := context.WithTimeout(ctx, lsAllTimeout)
			defer cancel()
			s, err := f.Open(c, e.r)
			if err != nil {
				out[i].err = err
				return
			}
			defer s.Close()
			out[i].doc, out[i].err = listSandbox(c, s, f.Now)
		})
	}
	wg.Wait()
	return out
}

// printAllTable is ls's table with a SANDBOX column first; a paused or
// unreachable sandbox is one row, in its place in the order.
func printAllTable(w io.Writer, all allListDoc, wide, headers bool, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if headers {
		fmt.Fprintln(tw, "SANDBOX\t"+groupHeader(wide))
	}
	// Between STATE and COMMAND a sandbox's own row has dashes.
	blanks := strings.Repeat("-\t", strings.Count(groupHeader(wide), "\t")-2)
	for _, sb := range all.Sandboxes {
		switch sb.State {
		case sandboxPaused:
			fmt.Fprintf(tw, "%s\t-\tpaused\t%snothing runs until it is resumed (sandtop e2b resume)\n", sb.Sandbox, blanks)
		case sandboxUnreachable:
			fmt.Fprintf(tw, "%s\t-\tunreachable\t%s%s\n", sb.Sandbox, blanks, clip(sb.Error, 120))
		case sandboxNotRunning:
			state := strings.ToLower(sb.Kube.Phase)
			if sb.Kube.Deleting {
				state = "terminating"
			}
			fmt.Fprintf(tw, "%s\t-\t%s\t%s%s\n", sb.Sandbox, state, blanks, clip(sb.Error, 120))
		}
		for _, g := range all.Groups {
			if g.Sandbox == sb.Sandbox {
				writeGroupRows(tw, g, wide, now, g.Sandbox+"\t")
			}
		}
	}
	tw.Flush()
	printPods(w, all.Sandboxes, headers, now)
	if len(all.Terminals) == 0 {
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if headers {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "SANDBOX\t"+terminalHeader)
	}
	for _, t := range all.Terminals {
		writeTerminalRow(tw, t, t.Sandbox+"\t")
	}
	tw.Flush()
}

// printPods is a table of the Kubernetes pods among the sandboxes, as
// kubectl get pods shows them: the sandbox's name, then the pod's
// namespace, phase (or terminating), node and age. --no-headers leaves it
// out: a script reads the groups' rows alone.
func printPods(w io.Writer, sbs []sandboxRow, headers bool, now time.Time) {
	var pods []sandboxRow
	for _, sb := range sbs {
		if sb.Kube != nil {
			pods = append(pods, sb)
		}
	}
	if len(pods) == 0 || !headers {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "SANDBOX\tNAMESPACE\tPOD\tPHASE\tNODE\tAGE")
	for _, sb := range pods {
		k := sb.Kube
		phase := k.Phase
		if k.Deleting {
			phase = "Terminating"
		}
		node := k.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sb.Sandbox, k.Namespace, k.Pod, phase, node, shortAge(now.Sub(k.Created)))
	}
	tw.Flush()
}
