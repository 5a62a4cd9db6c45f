package vt

// styleTable interns Styles so that a whole style fits in the one 24-bit
// colour field vt10x keeps per cell. ID 0 is the default style.
//
// The table is bounded: when it is full the adapter marks the IDs still
// referenced (screen cells, pens, the hidden screen) and the rest are
// recycled through the free list.
type styleTable struct {
	byID  []Style
	ids   map[Style]uint32
	free  []uint32
	limit int
}

// maxStyleID is the largest ID that fits the 24-bit colour field.
const maxStyleID = 1<<24 - 1

func newStyleTable(limit int) *styleTable {
	return &styleTable{byID: []Style{{}}, ids: map[Style]uint32{{}: 0}, limit: limit}
}

// lookup returns the id of s if it is interned.
func (t *styleTable) lookup(s Style) (uint32, bool) {
	id, ok := t.ids[s]
	return id, ok
}

// add interns s; it reports false when the table is full.
func (t *styleTable) add(s Style) (uint32, bool) {
	var id uint32
	switch {
	case len(t.free) > 0:
		id = t.free[len(t.free)-1]
		t.free = t.free[:len(t.free)-1]
		t.byID[id] = s
	case len(t.byID) < t.limit && len(t.byID) <= maxStyleID:
		id = uint32(len(t.byID))
		t.byID = append(t.byID, s)
	default:
		return 0, false
	}
	t.ids[s] = id
	return id, true
}

// get returns the style with the given id; unknown ids give the default.
func (t *styleTable) get(id uint32) Style {
	if int(id) < len(t.byID) {
		return t.byID[id]
	}
	return Style{}
}

// sweep frees every id for which live reports false. It returns how many
// were freed.
func (t *styleTable) sweep(live func(uint32) bool) int {
	n := 0
	for id := 1; id < len(t.byID); id++ {
		s := t.byID[id]
		if cur, ok := t.ids[s]; !ok || cur != uint32(id) || live(uint32(id)) {
			continue
		}
		delete(t.ids, s)
		t.free = append(t.free, uint32(id))
		n++
	}
	return n
}

// size is the number of interned styles.
func (t *styleTable) size() int { return len(t.ids) }
