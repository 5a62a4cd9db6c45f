package kube

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func pod(ports []corev1.ContainerPort, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "agents", Name: "a-1", UID: "u1", Annotations: ann},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app"}, {Name: "sandtop", Ports: ports}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3"},
	}
}

func TestFromPodFindsTheDaemonPort(t *testing.T) {
	cases := []struct {
		name  string
		ports []corev1.ContainerPort
		ann   map[string]string
		want  int32
		ok    bool
	}{
		{"named port", []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {Name: "sandtop", ContainerPort: 49983}}, nil, 49983, true},
		{"no daemon", []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}, nil, 0, false},
		{"annotation number", nil, map[string]string{PortAnnotation: "7000"}, 7000, true},
		{"annotation name", []corev1.ContainerPort{{Name: "envd", ContainerPort: 49983}}, map[string]string{PortAnnotation: "envd"}, 49983, true},
		{"annotation out of range", nil, map[string]string{PortAnnotation: "70000"}, 0, false},
	}
	for _, c := range cases {
		p, ok := FromPod(pod(c.ports, c.ann))
		if ok != c.ok || p.Port != c.want {
			t.Errorf("%s: port %d ok %v; want %d %v", c.name, p.Port, ok, c.want, c.ok)
		}
	}
}

func TestReachableSaysWhyNot(t *testing.T) {
	p, _ := FromPod(pod([]corev1.ContainerPort{{Name: "sandtop", ContainerPort: 1}}, nil))
	if err := p.Reachable(); err != nil {
		t.Fatalf("running pod: %v", err)
	}
	pending := p
	pending.Phase, pending.IP = "Pending", ""
	if err := pending.Reachable(); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "Pending") {
		t.Fatalf("pending pod: %v", err)
	}
	gone := p
	gone.Deleting = true
	if err := gone.Reachable(); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "terminating") {
		t.Fatalf("deleting pod: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]string{"a-1": "dflt/a-1", "ns/a-1": "ns/a-1", "kube:ns/a-1": "ns/a-1"} {
		ns, name, err := ParseRef(in, "dflt")
		if err != nil || ns+"/"+name != want {
			t.Errorf("ParseRef(%q) = %s/%s, %v; want %s", in, ns, name, err, want)
		}
	}
	for _, bad := range []string{"", "kube:", "ns/", "/a", "a/b/c"} {
		if _, _, err := ParseRef(bad, "dflt"); err == nil {
			t.Errorf("ParseRef(%q) took it", bad)
		}
	}
}

func TestEndpointIsThePodProxy(t *testing.T) {
	c := &Cluster{rc: &rest.Config{Host: "https://10.0.0.1:6443/"}}
	p := Pod{Namespace: "agents", Name: "a-1", IP: "10.1.2.3", Port: 49983, Scheme: "http"}
	if got, want := c.Endpoint(p), "https://10.0.0.1:6443/api/v1/namespaces/agents/pods/a-1:49983/proxy"; got != want {
		t.Fatalf("endpoint %s; want %s", got, want)
	}
	p.Scheme = "https"
	if got := c.Endpoint(p); !strings.HasSuffix(got, "/pods/https:a-1:49983/proxy") {
		t.Fatalf("TLS endpoint %s", got)
	}
	c.opts.Direct = true
	if got := c.Endpoint(p); got != "https://10.1.2.3:49983" {
		t.Fatalf("direct endpoint %s", got)
	}
}

// The API server's refusal becomes one readable error; the daemon's own
// error answers pass through as they came.
func TestProxyErrorsNameWhatIsMissing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/daemon") {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"code":"unauthenticated","message":"bad token"}`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"a-1\" is forbidden: User \"bob\" cannot get resource \"pods/proxy\"","reason":"Forbidden","code":403}`)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &proxyErrors{next: http.DefaultTransport}}
	_, err := hc.Get(srv.URL + "/api/v1/namespaces/agents/pods/a-1:49983/proxy/process.Process/List")
	if err == nil || !strings.Contains(err.Error(), "agents/a-1") || !strings.Contains(err.Error(), "get and create on pods/proxy") || !strings.Contains(err.Error(), `User "bob"`) {
		t.Fatalf("refusal: %v", err)
	}
	res, err := hc.Get(srv.URL + "/api/v1/namespaces/agents/pods/a-1:49983/proxy/daemon")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "bad token") {
		t.Fatalf("daemon's answer changed: %d %s", res.StatusCode, body)
	}
}
