package kube

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// core is a client of the core API group's pods and secrets only. The
// generated clientset would do, but it registers every API group of
// Kubernetes when the program starts: that cost every sandtop command,
// the daemon included, 16 MB of memory and a few milliseconds.
type core struct{ rc *rest.RESTClient }

// coreCodecs decode core/v1 objects (and the API server's Status).
var coreCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err) // registering the package's own types cannot fail
	}
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)
	return serializer.NewCodecFactory(s)
}()

func newCore(cfg *rest.Config, hc *http.Client) (core, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = coreCodecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	return core{rc: rc}, err
}

func (c core) listPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	out := &corev1.PodList{}
	err := c.rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(out)
	return out, err
}

func (c core) watchPods(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
}

func (c core) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := c.rc.Get().Namespace(ns).Resource("pods").Name(name).Do(ctx).Into(out)
	return out, err
}

func (c core) getSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	out := &corev1.Secret{}
	err := c.rc.Get().Namespace(ns).Resource("secrets").Name(name).Do(ctx).Into(out)
	return out, err
}
