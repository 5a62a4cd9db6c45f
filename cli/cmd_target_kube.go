package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"

	"sandtop/backend/kube"
	"sandtop/backend/target"
	"sandtop/config"
)

// kubeExtension adds --kube and its companions: the pods that run
// sandtop's daemon, found through the Kubernetes API server with the
// kubeconfig kubectl would use, and reached through its pod proxy.
type kubeExtension struct {
	pod           e2bValue // --kube, or --kube=POD for one pod
	kubeconfig    string
	context       string
	namespace     string
	allNamespaces bool
	selector      string
	tokenSecret   string
	direct        bool
}

// kubeAll is what a bare --kube means: every pod that runs the daemon.
const kubeAll = "all"

func init() {
	targetExtensions = append(targetExtensions, func() targetExtension { return &kubeExtension{} })
}

func (x *kubeExtension) register(fs *pflag.FlagSet) {
	fs.Var(&x.pod, "kube", "Kubernetes pods that run sandtop's daemon (a container port named \"sandtop\"), through the API server's pod proxy: --kube for every one, --kube=POD (or NAMESPACE/POD) for one")
	fs.Lookup("kube").NoOptDefVal = kubeAll
	fs.StringVar(&x.kubeconfig, "kubeconfig", "", "kubeconfig file for --kube (default $KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&x.context, "kube-context", "", "kubeconfig context for --kube (default: the current one; implies --kube)")
	fs.StringVar(&x.namespace, "namespace", "", "namespace of the pods (default: the context's; implies --kube)")
	fs.BoolVar(&x.allNamespaces, "all-namespaces", false, "pods of every namespace (ls -A implies it; implies --kube)")
	fs.StringVar(&x.selector, "selector", "", "label selector of the pods, e.g. app=agent (implies --kube)")
	fs.StringVar(&x.tokenSecret, "kube-token-secret", "", "Secret (key \"token\") in each pod's namespace holding the daemon's token (default: the pod's sandtop.dev/token-secret annotation; --token-file wins)")
	fs.BoolVar(&x.direct, "kube-direct", false, "dial the pods' IPs instead of the API server's pod proxy (sandtop inside the cluster)")
}

// given says whether any kube flag was given.
func (x *kubeExtension) given() bool {
	return x.pod.set || x.kubeconfig != "" || x.context != "" || x.namespace != "" || x.allNamespaces ||
		x.selector != "" || x.tokenSecret != "" || x.direct
}

func (x *kubeExtension) apply(c *target.Config) (bool, error) {
	if !x.given() {
		return false, nil
	}
	pod := strings.TrimSpace(x.pod.v)
	switch {
	case x.pod.set && pod == "":
		return false, errors.New("--kube= needs a pod name (or give --kube alone for every pod)")
	case pod == kubeAll:
		pod = ""
	case pod != "" && (x.selector != "" || x.allNamespaces):
		return false, errors.New("--kube=POD names one pod; --selector and --all-namespaces choose several, so give one or the other")
	}
	c.KubePod = pod
	if _, err := labels.Parse(x.selector); err != nil {
		return false, fmt.Errorf("--selector %q: %w", x.selector, err)
	}
	if x.allNamespaces && x.namespace != "" {
		return false, errors.New("--namespace names one namespace and --all-namespaces every one; give only one")
	}
	c.Kube = &kube.Options{
		Kubeconfig: config.ExpandPath(x.kubeconfig, cwd()), Context: x.context,
		Namespace: x.namespace, AllNamespaces: x.allNamespaces, Selector: strings.TrimSpace(x.selector),
		TokenSecret: x.tokenSecret, Direct: x.direct,
	}
	return true, nil
}

// kubeFlags is the flag set's kube extension.
func (t *targetFlags) kubeFlags() *kubeExtension {
	for _, x := range t.exts {
		if k, ok := x.(*kubeExtension); ok {
			return k
		}
	}
	return nil
}

// kubeTargetConfig turns a [targets.NAME] table with kube into the target
// config.
func kubeTargetConfig(ct config.Target) target.Config {
	k := ct.Kube
	return target.Config{
		Kube: &kube.Options{Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace,
			AllNamespaces: k.AllNamespaces, Selector: k.Selector, TokenSecret: k.TokenSecret, Direct: k.Direct},
		TokenFile: ct.TokenFile, CAFile: ct.CAFile, RuntimeRoot: ct.RuntimeRoot, AgentWorkspace: ct.AgentWorkspace,
	}
}

// namedKube is one pod by the name ls -A gives it (kube:NAMESPACE/POD),
// or, with kube flags, POD or NAMESPACE/POD: through the kube flags'
// cluster, else a config kube target's, else the kubeconfig's defaults.
func (t *targetFlags) namedKube(cfg config.Config, name string) (selection, error) {
	sel := selection{name: name, readOnly: cfg.ReadOnly, expands: true}
	var c target.Config
	if k := t.kubeFlags(); k != nil && k.given() {
		if _, err := k.apply(&c); err != nil {
			return selection{}, usagef(err)
		}
	} else {
		for _, n := range cfg.TargetNames() {
			if ct := cfg.Targets[n]; ct.Kube != nil {
				c, sel.readOnly = kubeTargetConfig(ct), cfg.ReadOnlyFor(n)
				break
			}
		}
	}
	if c.Kube == nil {
		c.Kube = &kube.Options{}
	}
	if t.tokenFile != "" {
		c.TokenFile = config.ExpandPath(t.tokenFile, cwd())
	}
	if t.caFile != "" {
		c.CAFile = config.ExpandPath(t.caFile, cwd())
	}
	c.KubePod = name
	sel.cfg = c
	return sel, nil
}

// isKube says whether the selection names Kubernetes pods.
func (s selection) isKube() bool { return s.cfg.Kube != nil }

// noPodErr says that a kube selection found no daemon pod, and where it
// looked.
func noPodErr(k *kube.Options) error {
	where := "the context's namespace"
	switch {
	case k.AllNamespaces:
		where = "any namespace"
	case k.Namespace != "":
		where = "namespace " + k.Namespace
	}
	if k.Selector != "" {
		where += " with labels " + k.Selector
	}
	return fmt.Errorf("no pod in %s runs sandtop's daemon (a container port named %q, or the %s annotation)", where, kube.PortName, kube.PortAnnotation)
}
