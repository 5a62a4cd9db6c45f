package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"sandtop/backend/target"
	"sandtop/config"
)

// targetFlags select the sandbox; every command takes them.
type targetFlags struct {
	name      string
	socket    string
	envd      string
	tokenFile string
	user      string
}

func (t *targetFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.name, "target", "", "a target named in the config file ('local' is the embedded sandbox)")
	fs.StringVar(&t.socket, "socket", "", "unix socket of a sandtop daemon (sandtop serve --listen unix:PATH)")
	fs.StringVar(&t.envd, "envd", "", "URL of an envd-compatible daemon, e.g. http://10.0.0.5:49983")
	fs.StringVar(&t.tokenFile, "token-file", "", "file holding the access token for --envd")
	fs.StringVar(&t.user, "user", "", "sandbox user to run processes as, where the daemon allows it")
	for _, x := range targetExtensions {
		x.register(fs)
	}
}

// targetExtension is the hook for further kinds of sandbox (E2B, say): it
// adds its flags and, when one of them is set, fills in the target config.
// Its file appends it to targetExtensions in an init func; nothing else
// needs to change.
type targetExtension interface {
	register(fs *pflag.FlagSet)
	// apply reports whether its flags were given, after filling c.
	apply(c *target.Config) (bool, error)
}

var targetExtensions []targetExtension

// selection is the sandbox the flags and the config chose.
type selection struct {
	name string
	// startLocal means the embedded sandbox: find or start its daemon,
	// then dial its socket.
	startLocal bool
	cfg        target.Config
	readOnly   bool
}

// resolve applies the precedence: --socket, --envd or an extension's flag
// (only one of them), then --target NAME, then the config's target, then
// the local sandbox.
func (t *targetFlags) resolve(cfg config.Config) (selection, error) {
	var sel selection
	given := []string{}
	if t.socket != "" {
		given = append(given, "--socket")
		sel = selection{name: "socket:" + t.socket, cfg: target.Config{Local: "unix:" + config.ExpandPath(t.socket, cwd())}}
	}
	if t.envd != "" {
		given = append(given, "--envd")
		sel = selection{name: t.envd, cfg: target.Config{EnvdURL: t.envd}}
	}
	for _, x := range targetExtensions {
		var c target.Config
		ok, err := x.apply(&c)
		if err != nil {
			return selection{}, usagef(err)
		}
		if ok {
			given = append(given, "an extension flag")
			sel = selection{name: "extension", cfg: c}
		}
	}
	if t.name != "" {
		given = append(given, "--target")
	}
	if len(given) > 1 {
		return selection{}, usagef(fmt.Errorf("give only one target; got %s", strings.Join(given, " and ")))
	}
	if len(given) == 0 || t.name != "" {
		name := t.name
		if name == "" {
			name = cfg.Target
		}
		var err error
		if sel, err = namedTarget(cfg, name); err != nil {
			return selection{}, err
		}
	} else {
		sel.readOnly = cfg.ReadOnly
	}
	if t.tokenFile != "" {
		if sel.cfg.EnvdURL == "" {
			return selection{}, usagef(errors.New("--token-file goes with --envd (the local sandbox and unix sockets need no token)"))
		}
		sel.cfg.TokenFile = config.ExpandPath(t.tokenFile, cwd())
	}
	if t.user != "" {
		sel.cfg.User = t.user
	}
	return sel, nil
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
	if ct.Socket != "" {
		sel.cfg = target.Config{Local: "unix:" + ct.Socket, User: ct.User}
	} else {
		sel.cfg = target.Config{EnvdURL: ct.Envd, TokenFile: ct.TokenFile, User: ct.User}
	}
	return sel, nil
}

// targets turns the selection into dialable targets, starting the local
// daemon first when the selection is the embedded sandbox.
func (s selection) targets(ctx context.Context) ([]target.Target, error) {
	c := s.cfg
	if s.startLocal {
		st, err := ensureLocalDaemon(ctx)
		if err != nil {
			return nil, err
		}
		c.Local = "unix:" + st.Socket
	}
	return target.ListTargets(ctx, c)
}
