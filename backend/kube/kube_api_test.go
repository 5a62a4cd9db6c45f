package kube_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"sandtop/backend/kube"
	"sandtop/backend/kube/kubetest"
	"sandtop/testwait"
)

// These run against a real kube-apiserver (kubetest.Start skips them,
// saying so, when none runs).

// hostServer answers /health at this machine's global address, where the
// pod proxy may dial, and tells what token it was sent.
func hostServer(t *testing.T) (ip string, port int) {
	t.Helper()
	ip = kubetest.HostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "token="+r.Header.Get("X-Access-Token")+" authz="+r.Header.Get("Authorization")+" path="+r.URL.Path)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ip, l.Addr().(*net.TCPAddr).Port
}

func connect(t *testing.T, kc string, o kube.Options) *kube.Cluster {
	t.Helper()
	o.Kubeconfig = kc
	cl, err := kube.Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestListFindsTheDaemonPodsTheSelectorMatches(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	agent := map[string]string{"role": "agent"}
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "b", Labels: agent, IP: "192.0.2.10", Port: 49983})
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "a", Labels: agent, IP: "192.0.2.11", Port: 49983})
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "web", Labels: agent, IP: "192.0.2.12", Port: 80, PortName: "http"})
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "other", Labels: map[string]string{"role": "db"}, IP: "192.0.2.13", Port: 49983})
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "c", Labels: agent, Port: 49983, Phase: "Pending"})

	pods, err := connect(t, kc.Kubeconfig, kube.Options{Namespace: ns, Selector: "role=agent"}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, p.Name+":"+p.Phase+":"+p.Node)
	}
	if strings.Join(got, " ") != "a:Running:node-a b:Running:node-a c:Pending:node-a" {
		t.Fatalf("listed %v", got)
	}
	if err := pods[2].Reachable(); !errors.Is(err, kube.ErrNotRunning) {
		t.Fatalf("pending pod reachable: %v", err)
	}
	if _, err := kube.Connect(kube.Options{Kubeconfig: kc.Kubeconfig, Selector: "app in (("}); err == nil || !strings.Contains(err.Error(), "selector") {
		t.Fatalf("bad selector: %v", err)
	}
}

func TestPodProxyCarriesTheTokenNotTheKubeCredentials(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	ip, port := hostServer(t)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", IP: ip, Port: port, Annotations: map[string]string{kube.TokenSecretAnnotation: "daemon-token"}})
	kc.Secret(t, ns, "daemon-token", "s3cret\n", true)
	cl := connect(t, kc.Kubeconfig, kube.Options{Namespace: ns})
	ctx := context.Background()
	p, err := cl.Get(ctx, ns, "p")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cl.Token(ctx, p)
	if err != nil || tok != "s3cret" {
		t.Fatalf("token %q, %v", tok, err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cl.Endpoint(p)+"/health", nil)
	req.Header.Set("X-Access-Token", tok)
	res, err := cl.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "token=s3cret authz= path=/health" {
		t.Fatalf("through the proxy: %d %q", res.StatusCode, body)
	}
	if !strings.Contains(cl.Endpoint(p), "/pods/p:"+strconv.Itoa(port)+"/proxy") {
		t.Fatalf("endpoint %s", cl.Endpoint(p))
	}
}

func TestWithoutPodsProxyTheErrorSaysSo(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	ip, port := hostServer(t)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", IP: ip, Port: port})
	user := kc.User(t, ns, "viewer", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}})
	cl := connect(t, user, kube.Options{})
	ctx := context.Background()
	pods, err := cl.List(ctx)
	if err != nil || len(pods) != 1 {
		t.Fatalf("the viewer may list pods: %v %v", pods, err)
	}
	_, err = cl.HTTPClient().Get(cl.Endpoint(pods[0]) + "/health")
	if err == nil || !strings.Contains(err.Error(), "pods/proxy") || !strings.Contains(err.Error(), ns+"/p") {
		t.Fatalf("proxy without pods/proxy: %v", err)
	}
	// Reading the token Secret needs its own grant, and says so.
	if _, err := connect(t, user, kube.Options{TokenSecret: "x"}).Token(ctx, pods[0]); err == nil || !strings.Contains(err.Error(), "forbidden by RBAC") {
		t.Fatalf("secret without get on secrets: %v", err)
	}
	// A user who may not list pods hears that, not "no pods".
	other := kc.Namespace(t)
	if _, err := connect(t, user, kube.Options{Namespace: other}).List(ctx); err == nil || !strings.Contains(err.Error(), "forbidden by RBAC") {
		t.Fatalf("list in another namespace: %v", err)
	}
}

func TestADeletedPodIsGone(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", IP: "192.0.2.20", Port: 49983})
	cl := connect(t, kc.Kubeconfig, kube.Options{Namespace: ns})
	ctx := context.Background()
	p, err := cl.Get(ctx, ns, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Probe(ctx, p); err != nil {
		t.Fatalf("probe of a running pod: %v", err)
	}
	kc.DeletePod(t, ns, "p")
	testwait.NoError(t, 20*time.Second, func() error {
		if err := cl.Probe(ctx, p); !errors.Is(err, kube.ErrPodGone) {
			return fmt.Errorf("probe after delete: %v", err)
		}
		return nil
	})
	// Another pod of that name is not the one sandtop knew.
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", IP: "192.0.2.20", Port: 49983})
	if err := cl.Probe(ctx, p); !errors.Is(err, kube.ErrPodGone) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("probe of a replaced pod: %v", err)
	}
}

// The watcher follows pods as they start, change phase and go, without
// being asked again.
func TestWatcherFollowsPods(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	cl := connect(t, kc.Kubeconfig, kube.Options{Namespace: ns, Selector: "role=agent"})
	w := kube.NewWatcher(cl)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	ref := "kube:" + ns + "/p"
	waitFor := func(what string, cond func(p kube.Pod, found, known bool) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			ch := w.Changed()
			p, found, known, _ := w.Get(ref)
			if cond(p, found, known) {
				return
			}
			select {
			case <-ch:
			case <-deadline:
				t.Fatalf("timed out waiting for %s: %+v found %v known %v", what, p, found, known)
			}
		}
	}
	waitFor("the first listing", func(_ kube.Pod, found, known bool) bool { return known && !found })
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", Labels: map[string]string{"role": "agent"}, IP: "192.0.2.30", Port: 49983})
	waitFor("the pod running", func(p kube.Pod, found, _ bool) bool { return found && p.Phase == "Running" && p.IP == "192.0.2.30" })
	kc.DeletePod(t, ns, "p")
	waitFor("the pod gone", func(_ kube.Pod, found, known bool) bool { return known && !found })
}

// A pod's annotation cannot make sandtop read just any Secret and hand
// it to the pod: only one labelled as a sandtop token. The operator's own
// --kube-token-secret needs no label.
func TestAPodNamesOnlyALabelledTokenSecret(t *testing.T) {
	kc := kubetest.Start(t)
	ns := kc.Namespace(t)
	kc.Secret(t, ns, "db-password", "hunter2", false)
	kc.Pod(t, kubetest.PodSpec{Namespace: ns, Name: "p", IP: "192.0.2.40", Port: 49983, Annotations: map[string]string{kube.TokenSecretAnnotation: "db-password"}})
	ctx := context.Background()
	cl := connect(t, kc.Kubeconfig, kube.Options{Namespace: ns})
	p, err := cl.Get(ctx, ns, "p")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cl.Token(ctx, p)
	if err == nil || tok != "" || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "not labelled sandtop.dev/token=true") {
		t.Fatalf("an unlabelled secret named by the pod: %q, %v", tok, err)
	}
	tok, err = connect(t, kc.Kubeconfig, kube.Options{Namespace: ns, TokenSecret: "db-password"}).Token(ctx, p)
	if err != nil || tok != "hunter2" {
		t.Fatalf("the operator's secret: %q, %v", tok, err)
	}
}
