package cli

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"sandtop/backend/target"
	"sandtop/config"
)

// A group in another sandbox than the command's own is named SANDBOX/PGID,
// where SANDBOX is what ls -A prints: local, a config target's name,
// socket:PATH, envd:HOST:PORT, e2b:ID or kube:NAMESPACE/POD (with --kube
// also POD or NAMESPACE/POD). A bare PGID keeps meaning the
// sandbox the target flags select.

// groupRef is one PGID argument, with the sandbox it names ("" for the
// command's own).
type groupRef struct {
	sandbox string
	pgid    int
}

// String is the ref as the operator wrote it (the pgid alone for the
// command's own sandbox), for messages.
func (r groupRef) String() string {
	if r.sandbox == "" {
		return strconv.Itoa(r.pgid)
	}
	return r.sandbox + "/" + strconv.Itoa(r.pgid)
}

// parseGroupRef reads PGID or SANDBOX/PGID (what says pgid or pid). A path
// holds slashes, so the last one splits.
func parseGroupRef(what, arg string) (groupRef, error) {
	i := strings.LastIndexByte(arg, '/')
	if i < 0 {
		n, err := parsePositiveID(what, arg)
		return groupRef{pgid: n}, err
	}
	sandbox, id := arg[:i], arg[i+1:]
	if sandbox == "" {
		return groupRef{}, usagef(fmt.Errorf("%q: want %s or SANDBOX/%s, SANDBOX as 'sandtop ls -A' prints it", arg, strings.ToUpper(what), strings.ToUpper(what)))
	}
	n, err := parsePositiveID(what, id)
	if err != nil {
		return groupRef{}, fmt.Errorf("%s: %w", arg, err)
	}
	return groupRef{sandbox: sandbox, pgid: n}, nil
}

// parseGroupRefs reads the arguments of kill and signal, each once.
func parseGroupRefs(args []string) ([]groupRef, error) {
	var refs []groupRef
	for _, a := range args {
		r, err := parseGroupRef("pgid", a)
		if err != nil {
			return nil, err
		}
		dup := false
		for _, seen := range refs {
			dup = dup || seen == r
		}
		if !dup {
			refs = append(refs, r)
		}
	}
	return refs, nil
}

// named is the selection of the sandbox that ls -A calls name. The target
// flags still say how to reach it where the name does not (--token-file
// for an --envd of that host, --e2b's control plane, --user and the
// layout flags).
func (t *targetFlags) named(cfg config.Config, name string) (selection, error) {
	var sel selection
	var err error
	_, configured := cfg.Targets[name]
	kubeGiven := t.kubeFlags() != nil && t.kubeFlags().given()
	switch kind, rest, _ := strings.Cut(name, ":"); {
	case kind == "kube" && rest != "",
		kubeGiven && !configured && name != config.LocalTarget && !strings.Contains(name, ":"):
		sel, err = t.namedKube(cfg, name)
	case name == config.LocalTarget || configured || !strings.Contains(name, ":"):
		sel, err = namedTarget(cfg, name)
	case kind == "socket" && rest != "":
		sel = selection{name: name, cfg: target.Config{Local: "unix:" + config.ExpandPath(rest, cwd())}, readOnly: cfg.ReadOnly}
	case kind == "envd" && rest != "":
		sel, err = t.namedEnvd(cfg, name, rest)
	case kind == "e2b" && rest != "":
		sel, err = t.namedE2B(cfg, name, rest)
	default:
		err = usagef(errors.New("want local, a config target, socket:PATH, envd:HOST:PORT, e2b:ID or kube:NAMESPACE/POD"))
	}
	if err != nil {
		return selection{}, err
	}
	if t.user != "" && sel.isKube() {
		return selection{}, usagef(errors.New("--user does not go with --kube: through the pod proxy the daemon runs processes as its own user"))
	}
	if t.user != "" {
		sel.cfg.User = t.user
	}
	return sel, t.applyLayout(&sel)
}

// namedEnvd finds envd:HOST:PORT among the --envd flags (with their token
// file), else takes http://HOST:PORT with no token.
func (t *targetFlags) namedEnvd(cfg config.Config, name, host string) (selection, error) {
	sel := selection{name: name, cfg: target.Config{EnvdURL: "http://" + host}, readOnly: cfg.ReadOnly}
	for _, e := range t.envds {
		if envdName(e) == name {
			sel.cfg.EnvdURL = e
			if t.tokenFile != "" {
				sel.cfg.TokenFile = config.ExpandPath(t.tokenFile, cwd())
			}
			if t.caFile != "" {
				sel.cfg.CAFile = config.ExpandPath(t.caFile, cwd())
			}
			return sel, nil
		}
	}
	if u, err := url.Parse(sel.cfg.EnvdURL); err != nil || u.Host != host {
		return selection{}, usagef(fmt.Errorf("sandbox %q: %s is not HOST:PORT", name, host))
	}
	return sel, nil
}

// namedE2B is e2b:ID through the control plane that lists it: --e2b's (or
// --e2b-metadata's), else a config E2B target naming that ID or listing a
// team (its key file and domain), else the environment's.
func (t *targetFlags) namedE2B(cfg config.Config, name, id string) (selection, error) {
	sel := selection{name: name, cfg: target.Config{E2BSandboxID: id}, readOnly: cfg.ReadOnly}
	for _, x := range t.exts {
		var c target.Config
		ok, err := x.apply(&c)
		if err != nil {
			return selection{}, usagef(err)
		}
		if ok {
			sel.cfg = c
			sel.cfg.E2B, sel.cfg.E2BSandboxID, sel.cfg.E2BMetadata = false, id, nil
			return sel, nil
		}
	}
	var team string
	for _, n := range cfg.TargetNames() {
		ct := cfg.Targets[n]
		switch {
		case ct.IsE2B() && ct.E2B == id:
			team = n
		case ct.IsE2B() && ct.E2B == "" && team == "":
			team = n
		}
	}
	if team != "" {
		ts, err := namedTarget(cfg, team)
		if err != nil {
			return selection{}, err
		}
		ts.cfg.E2B, ts.cfg.E2BSandboxID, ts.cfg.E2BMetadata = false, id, nil
		ts.name, ts.expands = name, false
		return ts, nil
	}
	return sel, nil
}
