package ui

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/sahilm/fuzzy"

	"sandtop/sandbox"
)

// groupFilter is the groups' "/" filter, compiled once per change. It
// looks at a group's pgid, tag and command only: the origin column and the
// state are what the rows already sort and colour by, and matching them
// made "/top" match every row that says "sandtop".
//
//	text      a case-insensitive substring (the default)
//	re:EXPR   a regular expression, case-insensitive
//	-f TEXT   fuzzy: TEXT's letters in order, as fzf matches (k9s's form)
//	!…        any of the above, inverted
type groupFilter struct {
	match  func(field string) bool
	negate bool
	err    error // a bad regular expression: nothing matches
}

const (
	filterRegexPrefix = "re:"
	filterFuzzyPrefix = "-f "
)

func compileFilter(text string) groupFilter {
	var f groupFilter
	text, f.negate = strings.CutPrefix(text, "!")
	switch {
	case strings.HasPrefix(text, filterRegexPrefix):
		re, err := regexp.Compile("(?i)" + strings.TrimPrefix(text, filterRegexPrefix))
		if err != nil {
			f.err = err
			f.match = func(string) bool { return false }
			return f
		}
		f.match = re.MatchString
	case strings.HasPrefix(text, filterFuzzyPrefix):
		pattern := strings.TrimSpace(strings.TrimPrefix(text, filterFuzzyPrefix))
		f.match = func(field string) bool { return len(fuzzy.Find(pattern, []string{field})) > 0 }
	default:
		lower := strings.ToLower(text)
		f.match = func(field string) bool { return strings.Contains(strings.ToLower(field), lower) }
	}
	return f
}

// matches says whether the filter keeps g.
func (f groupFilter) matches(g *sandbox.Group) bool {
	if f.err != nil {
		return false
	}
	hit := false
	for _, field := range [...]string{strconv.Itoa(g.PGID), g.Tag, command(g)} {
		if field != "" && f.match(field) {
			hit = true
			break
		}
	}
	return hit != f.negate
}

// filterHelp is the filter prompt's reminder of its modes.
const filterHelp = "re: regex · -f fuzzy · ! not"
