package cli

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sandtop/groupstate"
)

// listFilter narrows what ls prints, in every output format.
type listFilter struct {
	tag   string // a glob, as path.Match reads it
	state string
	// liveOnly keeps only groups with a live member (ls -o name without
	// --all: what kill and signal can act on).
	liveOnly bool
}

// listStates are the group states --state accepts.
var listStates = func() []string {
	var out []string
	for _, s := range groupstate.All {
		out = append(out, string(s))
	}
	return out
}()

func (f *listFilter) register(c *cobra.Command) {
	c.Flags().StringVar(&f.tag, "tag", "", "only groups and terminals whose tag matches (a glob: 'ci-*')")
	c.Flags().StringVar(&f.state, "state", "", "only groups in this state: "+strings.Join(listStates, ", "))
	_ = c.RegisterFlagCompletionFunc("state", fixedCompletion(listStates...))
}

func (f *listFilter) check() error {
	if f.state != "" && !slices.Contains(listStates, f.state) {
		return usagef(fmt.Errorf("--state %q: choose one of %s", f.state, strings.Join(listStates, ", ")))
	}
	if _, err := path.Match(f.tag, ""); err != nil {
		return usagef(fmt.Errorf("--tag %q: %v", f.tag, err))
	}
	return nil
}

func (f *listFilter) tagMatches(tag string) bool {
	if f.tag == "" {
		return true
	}
	ok, _ := path.Match(f.tag, tag)
	return ok
}

// apply keeps the groups that pass; terminals have no state, so a state
// filter leaves them out.
func (f *listFilter) apply(doc listDoc) listDoc {
	groups := doc.Groups[:0:0]
	for _, g := range doc.Groups {
		if f.tagMatches(g.Tag) && (f.state == "" || g.State == f.state) && (!f.liveOnly || groupstate.State(g.State).Live()) {
			groups = append(groups, g)
		}
	}
	terms := doc.Terminals[:0:0]
	for _, t := range doc.Terminals {
		if f.state == "" && f.tagMatches(t.Tag) {
			terms = append(terms, t)
		}
	}
	doc.Groups, doc.Terminals = groups, terms
	return doc
}

// shortAge is an age in the largest unit that fits, like kubectl's AGE.
func shortAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// shortBytes is a size in binary units, one decimal under ten.
func shortBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return strconv.FormatUint(b, 10) + "B"
	}
	v, u := float64(b), 0
	for v >= unit && u < 4 {
		v /= unit
		u++
	}
	prec := 0
	if v < 10 {
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + "KMGT"[u-1:u]
}
