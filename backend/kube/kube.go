// Package kube finds sandtop's daemon in Kubernetes pods through the API
// server, as kubectl does (KUBECONFIG, ~/.kube/config, in-cluster), and
// reaches each one through the API server's pod proxy, so no port is
// exposed and RBAC (pods list/watch, pods/proxy get) decides who may look.
// A pod runs the daemon when one of its containers has a port named
// "sandtop" (or the pod names the port in the sandtop.dev/port annotation).
package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// PortName is the container port that marks sandtop's daemon.
	PortName = "sandtop"
	// PortAnnotation names the daemon's port (a number or a port name)
	// on a pod whose ports are not named.
	PortAnnotation = "sandtop.dev/port"
	// SchemeAnnotation is "https" when the daemon serves TLS
	// (serve --tls-cert); the proxy then speaks TLS to it.
	SchemeAnnotation = "sandtop.dev/scheme"
	// TokenSecretAnnotation names the Secret (in the pod's namespace)
	// holding the daemon's token, when the operator names none.
	TokenSecretAnnotation = "sandtop.dev/token-secret"
	// TokenKey is the Secret's key that holds the token.
	TokenKey = "token"
	// TokenLabel must be "true" on a Secret that a pod's annotation names:
	// a pod's author must not be able to make sandtop read any Secret the
	// operator can read and send it to that pod.
	TokenLabel = "sandtop.dev/token"
	// NamePrefix starts every pod's sandbox name: kube:NAMESPACE/POD.
	NamePrefix = "kube:"
)

// ErrPodGone is wrapped by errors about a pod the API server no longer
// has (deleted, or replaced by another pod of the same name).
var ErrPodGone = errors.New("pod is gone")

// ErrNotRunning is wrapped by the Err of a pod that is listed but cannot
// be reached yet (pending, finished, or without an IP).
var ErrNotRunning = errors.New("pod is not running")

// Options select the pods. Empty fields mean what kubectl means by them.
type Options struct {
	// Kubeconfig is a kubeconfig file; empty reads $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// Context is the kubeconfig context; empty is its current context.
	Context string
	// Namespace is where pods are listed; empty is the context's
	// namespace (else "default"). AllNamespaces lists every namespace.
	Namespace     string
	AllNamespaces bool
	// Selector is a label selector, e.g. app=agent.
	Selector string
	// TokenSecret names the Secret holding the daemon's token, in the
	// pod's namespace; empty means the pod's sandtop.dev/token-secret.
	TokenSecret string
	// Direct dials the pod's IP instead of the API server's pod proxy:
	// for a sandtop running inside the cluster.
	Direct bool
}

// Pod is one pod that runs sandtop's daemon.
type Pod struct {
	Namespace, Name string
	UID             string
	Phase           string // Pending, Running, Succeeded, Failed, Unknown
	Node            string
	IP              string
	Port            int32
	Scheme          string // http or https
	Created         time.Time
	Deleting        bool
	// TokenSecret is the pod's sandtop.dev/token-secret annotation.
	TokenSecret string
}

// Ref is the pod's sandbox name: kube:NAMESPACE/POD.
func (p Pod) Ref() string { return NamePrefix + p.Namespace + "/" + p.Name }

// Reachable says whether the daemon can be dialled: the pod runs, has an
// IP and is not being deleted. When not, the error says why.
func (p Pod) Reachable() error {
	switch {
	case p.Deleting:
		return fmt.Errorf("pod %s/%s is terminating: %w", p.Namespace, p.Name, ErrNotRunning)
	case p.Phase != string(corev1.PodRunning):
		return fmt.Errorf("pod %s/%s is %s: %w", p.Namespace, p.Name, p.Phase, ErrNotRunning)
	case p.IP == "":
		return fmt.Errorf("pod %s/%s has no IP yet: %w", p.Namespace, p.Name, ErrNotRunning)
	}
	return nil
}

// ParseRef reads kube:NAMESPACE/POD (or NAMESPACE/POD, or a bare POD in
// defaultNS).
func ParseRef(ref, defaultNS string) (ns, name string, err error) {
	rest := strings.TrimPrefix(ref, NamePrefix)
	ns, name, ok := strings.Cut(rest, "/")
	if !ok {
		ns, name = defaultNS, rest
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q: want POD, NAMESPACE/POD or kube:NAMESPACE/POD", ref)
	}
	return ns, name, nil
}

// Cluster is a connection to one API server, for one selection of pods.
type Cluster struct {
	opts Options
	rc   *rest.Config
	core core
	// proxy is the API server's HTTP client with refusals made readable,
	// for the pod proxy.
	proxy     *http.Client
	namespace string // the resolved namespace; "" with AllNamespaces
	selector  labels.Selector
}

// Connect reads the kubeconfig (nothing is asked of the API server yet).
func Connect(opts Options) (*Cluster, error) {
	sel, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("kube: selector %q: %w", opts.Selector, err)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	rc, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("kube: no kubeconfig: set KUBECONFIG, write ~/.kube/config, or run inside a pod with a service account")
		}
		return nil, fmt.Errorf("kube: kubeconfig: %w", err)
	}
	ns := opts.Namespace
	if ns == "" && !opts.AllNamespaces {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, fmt.Errorf("kube: kubeconfig namespace: %w", err)
		}
	}
	if opts.AllNamespaces {
		ns = ""
	}
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "sandtop"
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	api, err := newCore(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	c := &Cluster{opts: opts, rc: rc, core: api, namespace: ns, selector: sel}
	c.proxy = &http.Client{Transport: &proxyErrors{next: hc.Transport}}
	return c, nil
}

// Namespace is where pods are listed; "" means every namespace.
func (c *Cluster) Namespace() string { return c.namespace }

// DefaultNamespace is the namespace a bare pod name is in.
func (c *Cluster) DefaultNamespace() string {
	if c.namespace != "" {
		return c.namespace
	}
	return "default"
}

// List lists the pods that run sandtop's daemon, by namespace and name.
// Pods the selector matches that have no daemon port are left out.
func (c *Cluster) List(ctx context.Context) ([]Pod, error) {
	list, err := c.core.listPods(ctx, c.namespace, metav1.ListOptions{LabelSelector: c.selector.String()})
	if err != nil {
		return nil, c.apiErr("list pods", c.namespace, err)
	}
	var out []Pod
	for i := range list.Items {
		if p, ok := FromPod(&list.Items[i]); ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref() < out[j].Ref() })
	return out, nil
}

// Get reads one pod. A pod that does not exist, or runs no daemon, is an
// error wrapping ErrPodGone.
func (c *Cluster) Get(ctx context.Context, ns, name string) (Pod, error) {
	pod, err := c.core.getPod(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return Pod{}, fmt.Errorf("pod %s/%s: %w: the API server has no pod of that name", ns, name, ErrPodGone)
	}
	if err != nil {
		return Pod{}, c.apiErr("get pod "+name, ns, err)
	}
	p, ok := FromPod(pod)
	if !ok {
		return Pod{}, fmt.Errorf("pod %s/%s has no container port named %q and no %s annotation: it runs no sandtop daemon", ns, name, PortName, PortAnnotation)
	}
	return p, nil
}

// Probe says whether the pod p still exists as the same pod (same UID).
func (c *Cluster) Probe(ctx context.Context, p Pod) error {
	now, err := c.Get(ctx, p.Namespace, p.Name)
	if err != nil {
		return err
	}
	if p.UID != "" && now.UID != p.UID {
		return fmt.Errorf("pod %s/%s: %w (replaced by a new pod of that name)", p.Namespace, p.Name, ErrPodGone)
	}
	return now.Reachable()
}

// FromPod reads what sandtop needs of a pod; ok is false when the pod
// runs no daemon (no port named PortName, no PortAnnotation).
func FromPod(pod *corev1.Pod) (Pod, bool) {
	port, ok := daemonPort(pod)
	if !ok {
		return Pod{}, false
	}
	p := Pod{
		Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID),
		Phase: string(pod.Status.Phase), Node: pod.Spec.NodeName, IP: pod.Status.PodIP,
		Port: port, Scheme: "http", Created: pod.CreationTimestamp.Time,
		Deleting:    pod.DeletionTimestamp != nil,
		TokenSecret: pod.Annotations[TokenSecretAnnotation],
	}
	if p.Phase == "" {
		p.Phase = string(corev1.PodPending)
	}
	if len(pod.Status.PodIPs) > 0 && p.IP == "" {
		p.IP = pod.Status.PodIPs[0].IP
	}
	if strings.EqualFold(pod.Annotations[SchemeAnnotation], "https") {
		p.Scheme = "https"
	}
	return p, true
}

// daemonPort finds the daemon's port number: the annotation (a number or
// a port name), else the container port named PortName.
func daemonPort(pod *corev1.Pod) (int32, bool) {
	want := PortName
	if a := strings.TrimSpace(pod.Annotations[PortAnnotation]); a != "" {
		if n, err := strconv.ParseInt(a, 10, 32); err == nil && n > 0 && n < 65536 {
			return int32(n), true
		}
		want = a
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, ctr := range cs {
			for _, port := range ctr.Ports {
				if port.Name == want && port.ContainerPort > 0 {
					return port.ContainerPort, true
				}
			}
		}
	}
	return 0, false
}

// Endpoint is the envd endpoint of p's daemon: the pod proxy's URL on the
// API server, or with Direct the pod's own address.
func (c *Cluster) Endpoint(p Pod) string {
	if c.opts.Direct {
		host := p.IP
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return p.Scheme + "://" + host + ":" + strconv.Itoa(int(p.Port))
	}
	id := p.Name + ":" + strconv.Itoa(int(p.Port))
	if p.Scheme == "https" {
		id = "https:" + id
	}
	return strings.TrimRight(c.rc.Host, "/") + "/api/v1/namespaces/" + p.Namespace + "/pods/" + id + "/proxy"
}

// HTTPClient carries envd calls to p's daemon: the API server's client
// (its credentials, its CA) for the pod proxy; nil with Direct, where the
// envd client's own transport is used.
func (c *Cluster) HTTPClient() *http.Client {
	if c.opts.Direct {
		return nil
	}
	return c.proxy
}

// Token reads the daemon's token from the Secret the options name, else
// from the one p's annotation names, which must be labelled TokenLabel;
// "" when neither names one.
func (c *Cluster) Token(ctx context.Context, p Pod) (string, error) {
	name, fromPod := c.opts.TokenSecret, false
	if name == "" {
		name, fromPod = p.TokenSecret, true
	}
	if name == "" {
		return "", nil
	}
	s, err := c.core.getSecret(ctx, p.Namespace, name)
	if err != nil {
		return "", c.apiErr("read secret "+name, p.Namespace, err)
	}
	if fromPod && s.Labels[TokenLabel] != "true" {
		return "", fmt.Errorf("kube: pod %s/%s names secret %s for its token, which is not labelled %s=true; label it (kubectl label secret %s %s=true) or name it with --kube-token-secret",
			p.Namespace, p.Name, name, TokenLabel, name, TokenLabel)
	}
	tok := strings.TrimSpace(string(s.Data[TokenKey]))
	if tok == "" {
		return "", fmt.Errorf("kube: secret %s/%s has no %q key (or it is empty)", p.Namespace, name, TokenKey)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("kube: secret %s/%s: %q holds more than one line", p.Namespace, name, TokenKey)
	}
	return tok, nil
}

// apiErr says what the API server refused, and for a refusal which RBAC
// permission is missing.
func (c *Cluster) apiErr(what, ns string, err error) error {
	where := "namespace " + ns
	if ns == "" {
		where = "every namespace"
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("kube: %s in %s: forbidden by RBAC: %s", what, where, apiMessage(err))
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("kube: %s: the API server %s did not accept the kubeconfig's credentials: %s", what, c.rc.Host, apiMessage(err))
	}
	return fmt.Errorf("kube: %s in %s: %w", what, where, err)
}

func apiMessage(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Message
	}
	return err.Error()
}
