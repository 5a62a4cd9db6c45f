package kube_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"sandtop/backend/kube"
	"sandtop/backend/kube/kubetest"
)

// The example manifests under deploy/kubernetes/ stay valid: each object
// is applied to a real API server with a server-side dry run and strict
// field validation, as "kubectl apply --server-side --dry-run=server"
// would. A manifest with a misspelled field is refused, so the check can
// fail.

const deployDir = "../../deploy/kubernetes"

// decodeManifests reads every object of every YAML document in data.
func decodeManifests(t *testing.T, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(t *testing.T, kc *kubetest.Cluster) *applier {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kc.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kc.Admin.Discovery()))}
}

// dryRun applies obj server-side without persisting it.
func (a *applier) dryRun(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	var r dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if m.Scope.Name() == "namespace" {
		r = a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	force := true
	_, err = r.Patch(context.Background(), obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: "sandtop-deploy-test", Force: &force,
		DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict",
	})
	return err
}

func TestDeployManifestsPassAServerSideDryRun(t *testing.T) {
	kc := kubetest.Start(t)
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	// A dry run does not create the namespace the others go in.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "agents"}}
	if _, err := kc.Admin.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	a := newApplier(t, kc)
	kinds := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range decodeManifests(t, f, data) {
			if err := a.dryRun(obj); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(f), obj.GetKind(), obj.GetName(), err)
			}
			kinds[obj.GetKind()] = true
			switch obj.GetKind() {
			case "Pod":
				checkExamplePod(t, obj)
			case "Secret":
				if obj.GetLabels()[kube.TokenLabel] != "true" {
					t.Errorf("secret %s lacks the %s=true label a pod's annotation needs", obj.GetName(), kube.TokenLabel)
				}
			}
		}
	}
	for _, k := range []string{"Namespace", "Secret", "Pod", "NetworkPolicy", "Role", "RoleBinding"} {
		if !kinds[k] {
			t.Errorf("deploy/kubernetes has no %s", k)
		}
	}

	// The check can fail: a misspelled field is refused.
	bad := decodeManifests(t, "bad", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: bad, namespace: agents}\nspec:\n  contaners: []\n"))
	if err := a.dryRun(bad[0]); err == nil || !strings.Contains(err.Error(), "contaners") {
		t.Fatalf("a misspelled field passed the dry run: %v", err)
	}
}

// checkExamplePod: the pod sandtop is to find shares its process
// namespace, names the daemon's port and its token Secret.
func checkExamplePod(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	var pod corev1.Pod
	if err := runtimeFromUnstructured(obj, &pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ShareProcessNamespace == nil || !*pod.Spec.ShareProcessNamespace {
		t.Errorf("pod %s does not share its process namespace", pod.Name)
	}
	p, ok := kube.FromPod(&pod)
	if !ok || p.TokenSecret != "sandtop-token" {
		t.Errorf("sandtop would not find the daemon in pod %s: %+v", pod.Name, p)
	}
}

func runtimeFromUnstructured(obj *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
}
