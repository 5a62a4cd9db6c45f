package cli

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringArrayVarP is pflag's StringArrayVarP (each occurrence is one more
// value, commas and all) with a nil default, minus the cost of formatting
// that default: pflag writes it through encoding/csv, a 4 KiB buffer per
// flag, and the target flags are on every command, so each start of
// sandtop (every CLI call) paid for dozens of them.
func stringArrayVarP(fs *pflag.FlagSet, p *[]string, name, shorthand, usage string) {
	*p = nil
	f := fs.VarPF(&stringArray{p: p}, name, shorthand, usage)
	// Empty as pflag's own "[]" is for its stringArray: help shows no
	// default for it.
	f.DefValue = ""
}

// stringArray is the pflag.Value (and pflag.SliceValue) behind
// stringArrayVarP; its Type is pflag's, for help and completion.
type stringArray struct {
	p       *[]string
	changed bool
}

func (s *stringArray) Set(v string) error {
	if !s.changed {
		*s.p, s.changed = []string{v}, true
		return nil
	}
	*s.p = append(*s.p, v)
	return nil
}

func (s *stringArray) Append(v string) error {
	*s.p = append(*s.p, v)
	return nil
}

func (s *stringArray) Replace(vs []string) error {
	*s.p = append([]string(nil), vs...)
	return nil
}

func (s *stringArray) GetSlice() []string { return *s.p }

func (s *stringArray) Type() string { return "stringArray" }

// String is pflag's rendering: "[a,b]", quoted as CSV.
func (s *stringArray) String() string {
	if len(*s.p) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(*s.p)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
