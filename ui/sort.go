package ui

import (
	"cmp"
	"slices"

	"sandtop/sandbox"
)

// sortKey is what the group list is ordered by, htop-style.
type sortKey int

const (
	sortPGID sortKey = iota // sessions by sid, their groups by pgid
	sortCPU
	sortRSS
	sortAge
	sortState
)

// sortOrder is the list's order: a key and a direction. The zero value is
// by pgid, ascending.
type sortOrder struct {
	key     sortKey
	reverse bool
}

func (k sortKey) String() string {
	return [...]string{"pgid", "CPU", "RSS", "age", "state"}[k]
}

// column is the tree column the key sorts, for the arrow in its title.
func (k sortKey) column() string {
	return [...]string{"id", "cpu", "rss", "age", "state"}[k]
}

// arrow shows the direction the way the operator reads the list: ▼ for
// the biggest (or oldest, or first state) at the top.
func (o sortOrder) arrow() string {
	down := o.key == sortCPU || o.key == sortRSS
	if o.reverse {
		down = !down
	}
	if down {
		return "▼"
	}
	return "▲"
}

// toggle picks key, or reverses the order when it is already picked.
func (o sortOrder) toggle(k sortKey) sortOrder {
	if o.key == k {
		return sortOrder{key: k, reverse: !o.reverse}
	}
	return sortOrder{key: k}
}

// compare orders two groups: the biggest CPU and RSS first, the youngest
// first, live states before settled ones; the pgid breaks ties.
func (o sortOrder) compare(a, b *sandbox.Group) int {
	var c int
	switch o.key {
	case sortCPU:
		c = cmp.Compare(groupCPU(b), groupCPU(a))
	case sortRSS:
		c = cmp.Compare(groupRSS(b), groupRSS(a))
	case sortAge:
		c = groupStarted(b).Compare(groupStarted(a))
	case sortState:
		c = cmp.Compare(a.State.Rank(), b.State.Rank())
	}
	if c == 0 {
		c = cmp.Compare(a.PGID, b.PGID)
	}
	if o.reverse {
		return -c
	}
	return c
}

// sortGroups orders gs in place.
func (o sortOrder) sortGroups(gs []*sandbox.Group) {
	slices.SortStableFunc(gs, o.compare)
}
