// Command etcd is etcd's server, built from its pinned module for the
// Kubernetes test environment.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
