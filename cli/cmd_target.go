package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"sandtop/backend/local"
	"sandtop/backend/target"
	"sandtop/config"
)

// targetFlags select the sandboxes; every command takes them. --target,
// --socket and --envd may be repeated and mixed (with --e2b too): the TUI
// opens every sandbox they name, while the other commands
// work on exactly one.
type targetFlags struct {
	names     []string
	sockets   []string
	envds     []string
	tokenFile string
	caFile    string
	user      string
	// runtimeRoot and agentWorkspace override the config's runtime_root and
	// agent_workspace for every target the flags select.
	runtimeRoot    string
	agentWorkspace string
	// exts are this flag set's own extensions (one fresh instance of each
	// kind per command), so one command's flags never answer for another's.
	exts []targetExtension
}

func (t *targetFlags) register(fs *pflag.FlagSet) {
	stringArrayVarP(fs, &t.names, "target", "", "a target named in the config file ('local' is the embedded sandbox); repeatable")
	stringArrayVarP(fs, &t.sockets, "socket", "", "unix socket of a sandtop daemon (sandtop serve --listen unix:PATH); repeatable")
	stringArrayVarP(fs, &t.envds, "envd", "", "URL of an envd-compatible daemon, e.g. http://10.0.0.5:49983; repeatable")
	fs.StringVar(&t.tokenFile, "token-file", "", "file holding the access token for --envd (every --envd given)")
	fs.StringVar(&t.caFile, "ca-file", "", "CA certificate (PEM) of a daemon serving its own TLS (serve --tls-cert), for --envd https://... and --kube-direct")
	fs.StringVar(&t.user, "user", "", "sandbox user to run processes as, where the daemon allows it")
	fs.StringVar(&t.runtimeRoot, "runtime-root", "", "where sandtop keeps its state in a stock envd's sandbox (default ~/.local/state/sandtop of the sandbox user)")
	fs.StringVar(&t.agentWorkspace, "agent-workspace", "", "a DeepSeek Harness agent's workspace in the sandbox, whose .dsh-e2b/ is read too (agent groups are found without it)")
	t.exts = nil
	for _, newExt := range targetExtensions {
		x := newExt()
		x.register(fs)
		t.exts = append(t.exts, x)
	}
}

// targetExtension is the hook for further kinds of sandbox (E2B, say): it
// adds its flags and, when one of them is set, fills in the target config.
// Its file appends its constructor to targetExtensions in an init func;
// nothing else needs to change. Each registration gets its own instance.
type targetExtension interface {
	register(fs *pflag.FlagSet)
	// apply reports whether its flags were given, after filling c.
	apply(c *target.Config) (bool, error)
}

var targetExtensions []func() targetExtension

// selection is one sandbox (or, for an extension such as --e2b, one
// listing of sandboxes) that the flags and the config chose.
type selection struct {
	name string
	// startLocal means the embedded sandbox: find or start its daemon,
	// then dial its socket.
	startLocal bool
	cfg        target.Config
	readOnly   bool
	// expands is set for selections that list several sandboxes (E2B);
	// their targets are named by target.ListTargets.
	expands bool
	// e2bKeyFile is a config target's e2b_api_key_file, read on resolving.
	e2bKeyFile string
	// fromEnv: chosen by $SANDTOP_TARGET, a default rather than a flag.
	fromEnv bool
}

// isE2B says whether the selection names E2B sandboxes.
func (s selection) isE2B() bool { return s.cfg.E2B || s.cfg.E2BSandboxID != "" }

// envTarget names the target to use when no target flag does, like
// --target.
const envTarget = "SANDTOP_TARGET"

// resolve picks the one sandbox of a command that works on one: the
// flags if given, else the config's default target.
func (t *targetFlags) resolve(cfg config.Config) (selection, error) {
	sels, err := t.resolveAll(cfg)
	if err != nil {
		return selection{}, err
	}
	if len(sels) == 0 {
		sel, err := namedTarget(cfg, cfg.Target)
		if err != nil {
			return selection{}, err
		}
		return sel, t.applyLayout(&sel)
	}
	if len(sels) > 1 {
		names := make([]string, len(sels))
		for i, s := range sels {
			names[i] = s.name
		}
		return selection{}, usagef(fmt.Errorf("this command works on only one target; got %s (the TUI takes several)", strings.Join(names, ", ")))
	}
	return sels[0], nil
}

// resolveAll turns the target flags into selections, in the order
// --target, --socket, --envd, extensions. No flags gives none: the caller
// chooses the default (one target for the CLI, every known one for the TUI).
func (t *targetFlags) resolveAll(cfg config.Config) ([]selection, error) {
	var sels []selection
	for _, name := range t.names {
		sel, err := namedTarget(cfg, name)
		if err != nil {
			return nil, err
		}
		sels = append(sels, sel)
	}
	for _, s := range t.sockets {
		if s == "" {
			return nil, usagef(errors.New("--socket needs a path"))
		}
		sels = append(sels, selection{name: "socket:" + s, cfg: target.Config{Local: "unix:" + config.ExpandPath(s, cwd())}, readOnly: cfg.ReadOnly})
	}
	for _, e := range t.envds {
		sels = append(sels, selection{name: envdName(e), cfg: target.Config{EnvdURL: e}, readOnly: cfg.ReadOnly})
	}
	for _, x := range t.exts {
		var c target.Config
		ok, err := x.apply(&c)
		if err != nil {
			return nil, usagef(err)
		}
		if ok {
			name := "extension"
			if c.Kube != nil {
				name = "kube"
			}
			sels = append(sels, selection{name: name, cfg: c, readOnly: cfg.ReadOnly, expands: true})
		}
	}
	if t.tokenFile != "" {
		kubeGiven := t.kubeFlags() != nil && t.kubeFlags().given()
		if len(t.envds) == 0 && !kubeGiven {
			return nil, usagef(errors.New("--token-file goes with --envd or --kube (the local sandbox and unix sockets need no token)"))
		}
		for i := range sels {
			if sels[i].cfg.EnvdURL != "" && !sels[i].startLocal && slicesContains(t.envds, sels[i].cfg.EnvdURL) ||
				sels[i].expands && sels[i].isKube() {
				sels[i].cfg.TokenFile = config.ExpandPath(t.tokenFile, cwd())
			}
		}
	}
	if t.caFile != "" {
		n := 0
		for i := range sels {
			if sels[i].cfg.EnvdURL != "" && slicesContains(t.envds, sels[i].cfg.EnvdURL) || sels[i].expands && sels[i].isKube() {
				sels[i].cfg.CAFile = config.ExpandPath(t.caFile, cwd())
				n++
			}
		}
		if n == 0 {
			return nil, usagef(errors.New("--ca-file goes with --envd https://... or --kube-direct"))
		}
	}
	if len(sels) == 0 {
		if name := os.Getenv(envTarget); name != "" {
			sel, err := namedTarget(cfg, name)
			if err != nil {
				return nil, fmt.Errorf("$%s: %w", envTarget, err)
			}
			sel.fromEnv = true
			sels = append(sels, sel)
		}
	}
	seen := map[string]bool{}
	for i := range sels {
		if t.user != "" && sels[i].isKube() {
			return nil, usagef(errors.New("--user does not go with --kube: through the pod proxy the daemon runs processes as its own user"))
		}
		if t.user != "" {
			sels[i].cfg.User = t.user
		}
		if err := t.applyLayout(&sels[i]); err != nil {
			return nil, err
		}
		if !sels[i].expands && seen[sels[i].name] {
			return nil, usagef(fmt.Errorf("target %s is given twice", sels[i].name))
		}
		seen[sels[i].name] = true
	}
	return sels, nil
}

// dedupe drops repeated values of the repeatable flags.
func (t *targetFlags) dedupe() {
	for _, p := range []*[]string{&t.names, &t.sockets, &t.envds} {
		var kept []string
		for _, v := range *p {
			if !slicesContains(kept, v) {
				kept = append(kept, v)
			}
		}
		*p = kept
	}
}

// applyLayout sets the sandbox paths the flags name, which must be
// absolute: the sandbox may not be this machine.
func (t *targetFlags) applyLayout(sel *selection) error {
	for flag, v := range map[string]string{"--runtime-root": t.runtimeRoot, "--agent-workspace": t.agentWorkspace} {
		if v != "" && !strings.HasPrefix(v, "/") {
			return usagef(fmt.Errorf("%s %q must be an absolute path in the sandbox", flag, v))
		}
	}
	if t.runtimeRoot != "" {
		sel.cfg.RuntimeRoot = t.runtimeRoot
	}
	if t.agentWorkspace != "" {
		sel.cfg.AgentWorkspace = t.agentWorkspace
	}
	return nil
}

// envdName names an --envd target the way target.ListTargets does.
func envdName(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return "envd:" + u.Host
	}
	return "envd:" + raw
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// namedTarget looks a target up in the config.
func namedTarget(cfg config.Config, name string) (selection, error) {
	if name == config.LocalTarget {
		return selection{name: name, startLocal: true, readOnly: cfg.ReadOnlyFor(name)}, nil
	}
	ct, ok := cfg.Targets[name]
	if !ok {
		return selection{}, usagef(fmt.Errorf("no target %q in the config (have: %s)", name, strings.Join(append([]string{config.LocalTarget}, cfg.TargetNames()...), ", ")))
	}
	sel := selection{name: name, readOnly: cfg.ReadOnlyFor(name)}
	switch {
	case ct.Socket != "":
		sel.cfg = target.Config{Local: "unix:" + ct.Socket, User: ct.User,
			RuntimeRoot: ct.RuntimeRoot, AgentWorkspace: ct.AgentWorkspace}
	case ct.IsE2B():
		sel.cfg, sel.expands, sel.e2bKeyFile = e2bTargetConfig(ct), ct.E2B == "", ct.E2BAPIKeyFile
	case ct.Kube != nil:
		sel.cfg, sel.expands = kubeTargetConfig(ct), true
	default:
		sel.cfg = target.Config{EnvdURL: ct.Envd, TokenFile: ct.TokenFile, CAFile: ct.CAFile, User: ct.User,
			RuntimeRoot: ct.RuntimeRoot, AgentWorkspace: ct.AgentWorkspace}
	}
	return sel, nil
}

// allConfigured is what the TUI shows with no target flags: the local
// sandbox and every configured target, the config's default first shown.
func allConfigured(cfg config.Config) (sels []selection, initial int, err error) {
	names := append([]string{config.LocalTarget}, cfg.TargetNames()...)
	for i, name := range names {
		sel, err := namedTarget(cfg, name)
		if err != nil {
			return nil, 0, err
		}
		if name == cfg.Target {
			initial = i
		}
		sels = append(sels, sel)
	}
	return sels, initial, nil
}

// targets turns the selection into dialable targets, starting the local
// daemon first when the selection is the embedded sandbox. A selection
// that names one sandbox keeps its own name for it.
func (s selection) targets(ctx context.Context) ([]target.Target, error) {
	return s.listTargets(ctx, ensureLocalDaemon)
}

// targetsUnchecked is targets for a command that opens the one sandbox it
// lists at once: the local daemon is found but not probed, since the
// command's first call stands in for the probe (see resolved.open).
func (s selection) targetsUnchecked(ctx context.Context) ([]target.Target, error) {
	return s.listTargets(ctx, func(context.Context) (local.Status, error) { return uncheckedLocalDaemon() })
}

func (s selection) listTargets(ctx context.Context, localDaemon func(context.Context) (local.Status, error)) ([]target.Target, error) {
	c := s.cfg
	c.Warn = warnOnce
	if s.e2bKeyFile != "" {
		key, err := readAPIKey(s.e2bKeyFile)
		if err != nil {
			return nil, err
		}
		c.E2BConfig.APIKey = key
	}
	if s.startLocal {
		st, err := localDaemon(ctx)
		if err != nil {
			return nil, err
		}
		c.Local = "unix:" + st.Socket
	}
	ts, err := target.ListTargets(ctx, c)
	if err != nil {
		return nil, err
	}
	if !s.expands && len(ts) == 1 {
		ts[0].Name = s.name
	}
	return ts, nil
}
