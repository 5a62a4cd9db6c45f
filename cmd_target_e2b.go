package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"sandtop/backend/target"
)

// e2bAll is what a bare --e2b means: every running sandbox of the team.
const e2bAll = "all"

// e2bExtension adds --e2b: E2B sandboxes found through E2B's control plane
// with E2B_API_KEY (E2B_API_URL, E2B_DOMAIN and E2B_SANDBOX_URL as E2B's
// SDKs read them).
type e2bExtension struct {
	value string
	flag  *pflag.Flag // to tell "--e2b=" from no flag at all
}

func init() { targetExtensions = append(targetExtensions, &e2bExtension{}) }

func (x *e2bExtension) register(fs *pflag.FlagSet) {
	fs.StringVar(&x.value, "e2b", "", "E2B sandboxes (needs E2B_API_KEY): --e2b for every running one, --e2b=ID for one")
	x.flag = fs.Lookup("e2b")
	x.flag.NoOptDefVal = e2bAll
}

func (x *e2bExtension) apply(c *target.Config) (bool, error) {
	if x.flag == nil || !x.flag.Changed {
		return false, nil
	}
	v := strings.TrimSpace(x.value)
	switch v {
	case "":
		return false, errors.New("--e2b= needs a sandbox id (or give --e2b alone for all)")
	case e2bAll:
		c.E2B = true
	default:
		c.E2BSandboxID = v
	}
	return true, nil
}
