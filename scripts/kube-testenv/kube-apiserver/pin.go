//go:build pin

// Package pin keeps k8s.io/kubernetes (and so every module its API server
// needs) in go.mod; build.sh builds k8s.io/kubernetes/cmd/kube-apiserver.
package pin

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
