package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sandtop/backend/seam"
)

// watchList is ls -w: it prints first (the listing as plain ls would),
// then follows the seam's Watch (the daemon's table stream, where there is
// one) and prints a row for each group or terminal that appears or whose
// row changes, as kubectl get -w does. It ends without an error when ctx
// does (Ctrl-C, SIGTERM), and with the watch's error when the sandbox is
// lost.
func watchList(ctx context.Context, f *factory, s *connection, opts lsOptions, first listDoc) error {
	p := newWatchPrinter(f.Out, opts)
	if err := p.print(first, true); err != nil {
		return err
	}
	w, err := s.Runtime.Watch(ctx, seam.WatchOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer w.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case snap, ok := <-w.C():
			if !ok {
				if err := w.Err(); err != nil && ctx.Err() == nil {
					return fmt.Errorf("watching %s: %w", s.Target.Name, err)
				}
				return nil
			}
			doc := listDoc{Version: jsonVersion, Target: s.Target.Name, Taken: f.Now().UTC(),
				Groups: []listGroup{}, Terminals: []listTerminal{}}
			if err := p.print(opts.filter.apply(listSnapshot(doc, snap)), false); err != nil {
				return err
			}
		}
	}
}

// watchPrinter prints the rows of ls -w whose content changed since it
// last printed them, aligned under the first listing's columns.
type watchPrinter struct {
	w    io.Writer
	opts lsOptions
	// seen is each row's key ("g<pgid>", "t<pid>") and what it last showed.
	seen map[string]string
	// groupCols and termCols are the column widths of the first listing.
	groupCols, termCols []int
}

func newWatchPrinter(w io.Writer, opts lsOptions) *watchPrinter {
	return &watchPrinter{w: w, opts: opts, seen: map[string]string{}}
}

// print writes the rows of doc that are new or changed; first is the
// initial listing, which has the headers (unless --no-headers) and sets
// the columns.
func (p *watchPrinter) print(doc listDoc, first bool) error {
	var groups, terms [][]string // rows to print, as cells
	var jsonLines []any
	for _, g := range doc.Groups {
		var buf bytes.Buffer
		writeGroupRows(&buf, g, p.opts.output == "wide", doc.Taken, "")
		if !p.changed("g"+strconv.Itoa(g.PGID), groupSignature(g)) {
			continue
		}
		switch p.opts.output {
		case "name":
			fmt.Fprintln(p.w, g.PGID)
		case "json":
			jsonLines = append(jsonLines, g)
		default:
			for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
				groups = append(groups, strings.Split(line, "\t"))
			}
		}
	}
	if p.opts.output != "name" {
		for _, t := range doc.Terminals {
			var buf bytes.Buffer
			writeTerminalRow(&buf, t, "")
			if !p.changed("t"+strconv.Itoa(t.PID), buf.String()) {
				continue
			}
			if p.opts.output == "json" {
				jsonLines = append(jsonLines, t)
				continue
			}
			terms = append(terms, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\t"))
		}
	}
	for _, v := range jsonLines {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := p.w.Write(escapeC1(append(b, '\n'))); err != nil {
			return err
		}
	}
	if p.opts.output == "json" || p.opts.output == "name" {
		return nil
	}
	headers := first && !p.opts.noHeaders
	if first {
		gh := [][]string{strings.Split(groupHeader(p.opts.output == "wide"), "\t")}
		th := [][]string{strings.Split(terminalHeader, "\t")}
		p.groupCols = widths(append(gh, groups...))
		p.termCols = widths(append(th, terms...))
		if headers {
			groups = append(gh, groups...)
			if len(terms) > 0 {
				terms = append(th, terms...)
			}
		}
	}
	for _, row := range groups {
		fmt.Fprintln(p.w, padRow(row, p.groupCols))
	}
	if headers && len(terms) > 0 {
		fmt.Fprintln(p.w)
	}
	for _, row := range terms {
		fmt.Fprintln(p.w, padRow(row, p.termCols))
	}
	return nil
}

// changed records what a row shows and says whether it differs from
// what was printed for it last.
func (p *watchPrinter) changed(key, sig string) bool {
	if p.seen[key] == sig {
		return false
	}
	p.seen[key] = sig
	return true
}

// groupSignature is what a change of a group's row means: not its age,
// CPU or memory, which change at every tick.
func groupSignature(g listGroup) string {
	exit := ""
	if g.ExitCode != nil {
		exit = strconv.Itoa(*g.ExitCode)
	}
	procs := 0
	for _, m := range g.Members {
		if !m.Wrapper {
			procs++
		}
	}
	return strings.Join([]string{g.State, exit, g.Signal, g.Tag, strconv.Itoa(procs), strconv.Itoa(len(g.Escapees)),
		g.Stuck, g.Problem, strings.Join(g.Command, "\x00")}, "\x01")
}

// widths are the widest cell of each column, as the listing's tabwriter
// would pad them.
func widths(rows [][]string) []int {
	var out []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(out) {
				out = append(out, 0)
			}
			out[i] = max(out[i], len([]rune(cell)))
		}
	}
	return out
}

// padRow lays cells out in the columns, two spaces apart; a wider cell
// pushes the rest along rather than being cut.
func padRow(cells []string, cols []int) string {
	var b strings.Builder
	for i, cell := range cells {
		if i == len(cells)-1 {
			b.WriteString(cell)
			break
		}
		b.WriteString(cell)
		w := 0
		if i < len(cols) {
			w = cols[i]
		}
		b.WriteString(strings.Repeat(" ", max(w-len([]rune(cell)), 0)+2))
	}
	return strings.TrimRight(b.String(), " ")
}
