// Package kubetest gives tests a real Kubernetes API server (etcd and
// kube-apiserver, started by scripts/kube-testenv/start.sh; no scheduler,
// no kubelet) and the chores such a cluster leaves to its tests: a fresh
// namespace each, pods created with their node set and their status
// patched to Running at an address the pod proxy will dial, and users
// with only the permissions a test grants them.
package kubetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EnvRun names the control plane's state dir (what start.sh printed);
// $EnvRun/kubeconfig is its administrator's kubeconfig.
const EnvRun = "KUBE_TESTENV_RUN"

// Cluster is the test's view of the running control plane.
type Cluster struct {
	// Kubeconfig is the administrator's kubeconfig (system:masters).
	Kubeconfig string
	// Context is the kubeconfig's current context.
	Context string
	Admin   kubernetes.Interface
	rc      *rest.Config
}

// Available says whether a control plane was started for the tests (a
// test that only adds cases with it says so when it does not).
func Available() bool { return os.Getenv(EnvRun) != "" }

// Start finds the control plane, or skips the test, loudly, when there is
// none: .ci/run starts one; locally run scripts/kube-testenv/build.sh and
// start.sh and export KUBE_TESTENV_RUN.
func Start(t testing.TB) *Cluster {
	t.Helper()
	run := os.Getenv(EnvRun)
	if run == "" {
		t.Skipf("SKIPPED: no Kubernetes API server: $%s is not set (build and start one with scripts/kube-testenv/build.sh and start.sh, then export %s=<the dir start.sh printed>; .ci/run does this)", EnvRun, EnvRun)
	}
	kc := filepath.Join(run, "kubeconfig")
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatalf("$%s=%s: %v", EnvRun, run, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Kubeconfig: kc, Context: raw.CurrentContext, Admin: cs, rc: rc}
}

// Server is the API server's URL.
func (c *Cluster) Server() string { return c.rc.Host }

// Namespace creates a namespace for this test, deleted when it ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	name := "t-" + strings.ToLower(rand.String(8))
	ctx := context.Background()
	if _, err := c.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// No kubelet runs here to finish a graceful delete: a pod deleted
		// with a grace period would stay, terminating, for ever. The
		// namespace itself (whose finalizer nothing would run) is left.
		zero := int64(0)
		_ = c.Admin.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	})
	return name
}

// HostIP is this machine's first global unicast IPv4 address: the pod
// proxy refuses loopback, so a test's daemon listens there.
func HostIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("SKIPPED: this machine has no global IPv4 address for the pod proxy to dial")
	return ""
}

// PodSpec is a pod that runs a daemon at IP:Port.
type PodSpec struct {
	Namespace, Name string
	Labels          map[string]string
	Annotations     map[string]string
	IP              string
	Port            int
	// PortName is the container port's name (default "sandtop").
	PortName string
	// Phase is set in the status (default Running).
	Phase corev1.PodPhase
}

// Pod creates the pod on node "node-a" and patches its status, as a
// kubelet would, with the phase and IP.
func (c *Cluster) Pod(t testing.TB, s PodSpec) *corev1.Pod {
	t.Helper()
	if s.PortName == "" {
		s.PortName = "sandtop"
	}
	if s.Phase == "" {
		s.Phase = corev1.PodRunning
	}
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.Labels, Annotations: s.Annotations},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{
			Name: "sandtop", Image: "sandtop:test",
			Ports: []corev1.ContainerPort{{Name: s.PortName, ContainerPort: int32(s.Port)}},
		}}},
	}
	if _, err := c.Admin.CoreV1().Pods(s.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprintf(`{"status":{"phase":%q}}`, s.Phase)
	if s.IP != "" {
		status = fmt.Sprintf(`{"status":{"phase":%q,"podIP":%q,"podIPs":[{"ip":%q}]}}`, s.Phase, s.IP, s.IP)
	}
	got, err := c.Admin.CoreV1().Pods(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, []byte(status), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// DeletePod removes a pod at once (no kubelet is there to drain it).
func (c *Cluster) DeletePod(t testing.TB, ns, name string) {
	t.Helper()
	zero := int64(0)
	if err := c.Admin.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// Secret stores the daemon's token under key "token", labelled as a
// sandtop token (so a pod's annotation may name it) when labelled is true.
func (c *Cluster) Secret(t testing.TB, ns, name, token string, labelled bool) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: map[string]string{"token": token}}
	if labelled {
		s.Labels = map[string]string{"sandtop.dev/token": "true"}
	}
	if _, err := c.Admin.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// User makes a service account in ns bound to a Role with rules, and
// writes a kubeconfig for it; it returns the kubeconfig's path.
func (c *Cluster) User(t testing.TB, ns, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
	}
	if _, err := c.Admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(time.Hour / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}
	tr, err := c.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	for k, v := range raw.Clusters {
		cfg.Clusters[k] = v
	}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: raw.Contexts[raw.CurrentContext].Cluster, AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
