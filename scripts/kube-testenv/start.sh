#!/usr/bin/env bash
# Starts a throwaway Kubernetes control plane for the tests: etcd and
# kube-apiserver on free loopback ports, nothing else (no scheduler, no
# controllers, no kubelet: tests create pods with a node set and patch
# their status themselves). Writes, in a state directory:
#
#   kubeconfig   an administrator (group system:masters) over TLS
#   env          exports KUBE_TESTENV_RUN (the tests read only that) and
#                KUBECONFIG
#
#   KUBE_TESTENV_BIN      the binaries (default: build.sh's)
#   KUBE_TESTENV_RUN      the state directory (default: a new temp dir)
#   KUBE_TESTENV_TIMEOUT  seconds to wait for readiness (default 180)
#
# Prints the state directory on stdout. Stop it all with stop.sh DIR.
set -euo pipefail
bin=${KUBE_TESTENV_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-testenv/bin}
for b in etcd kube-apiserver; do
	[[ -x $bin/$b ]] || { echo "kube-testenv: no $bin/$b; run $(dirname "$0")/build.sh first" >&2; exit 1; }
done
for tool in openssl curl; do
	command -v "$tool" >/dev/null || { echo "kube-testenv: $tool is needed" >&2; exit 1; }
done
run=${KUBE_TESTENV_RUN:-$(mktemp -d "${TMPDIR:-/tmp}/kube-testenv.XXXXXX")}
mkdir -p "$run/pki" "$run/etcd"
run=$(cd "$run" && pwd)
limit=${KUBE_TESTENV_TIMEOUT:-180}
started=$SECONDS

die() {
	echo "kube-testenv: $*" >&2
	for log in "$run"/*.log; do
		[[ -f $log ]] && { echo "== last lines of $log" >&2; tail -n 25 "$log" >&2; }
	done
	KUBE_TESTENV_KEEP=1 "$(dirname "$0")/stop.sh" "$run" >&2 || true
	exit 1
}

# A loopback port no one listens on. Another process may still take it
# before we do; the component then fails and start.sh says so.
taken=" "
pick_port() {
	local p tries
	for tries in $(seq 100); do
		p=$((21000 + RANDOM % 30000))
		[[ $taken == *" $p "* ]] && continue
		if ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			taken+="$p "
			echo "$p"
			return
		fi
	done
	die "found no free port"
}

# wait_for WHAT PIDFILE COMMAND...: until COMMAND succeeds, while the
# component lives, within the time limit.
wait_for() {
	local what=$1 pidfile=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		kill -0 "$(cat "$pidfile")" 2>/dev/null || die "$what exited"
		((SECONDS - started < limit)) || die "$what not ready after $limit s"
		sleep 0.3
	done
}

# Certificates: a CA, the API server's serving certificate for
# 127.0.0.1 and localhost, and the key service-account tokens are signed
# with. The administrator is a static token in group system:masters.
pki=$run/pki
openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj /CN=kube-testenv-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
	-keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage=serverAuth' \
	'keyUsage=critical,digitalSignature,keyEncipherment' >"$pki/server.ext"
openssl x509 -req -days 3 -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
	-extfile "$pki/server.ext" -out "$pki/server.crt" 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
token=$(openssl rand -hex 24)
echo "$token,testenv-admin,testenv-admin,\"system:masters\"" >"$pki/tokens.csv"
chmod 600 "$pki"/*

client=$(pick_port)
peer=$(pick_port)
setsid "$bin/etcd" --name testenv --data-dir "$run/etcd" --unsafe-no-fsync --log-level warn \
	--listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
	--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
	--initial-cluster "testenv=http://127.0.0.1:$peer" \
	</dev/null >"$run/etcd.log" 2>&1 &
echo $! >"$run/etcd.pid"
wait_for etcd "$run/etcd.pid" curl -fsS "http://127.0.0.1:$client/health"

# --endpoint-reconciler-type none: with a loopback advertise address the
# default reconciler refuses to start. No ServiceAccount admission: no
# controller would create the accounts it waits for.
api=$(pick_port)
server=https://127.0.0.1:$api
setsid "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$client" \
	--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api" \
	--endpoint-reconciler-type none --service-cluster-ip-range 10.0.0.0/24 \
	--cert-dir "$pki" --tls-cert-file "$pki/server.crt" --tls-private-key-file "$pki/server.key" \
	--client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" --authorization-mode RBAC \
	--service-account-issuer "$server" --service-account-key-file "$pki/sa.pub" \
	--service-account-signing-key-file "$pki/sa.key" \
	--disable-admission-plugins ServiceAccount --allow-privileged=true \
	</dev/null >"$run/kube-apiserver.log" 2>&1 &
echo $! >"$run/kube-apiserver.pid"
ready() {
	[[ $(curl -sS -o /dev/null -w '%{http_code}' --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "$server/readyz") == 200 ]]
}
wait_for kube-apiserver "$run/kube-apiserver.pid" ready

umask 077
cat >"$run/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
current-context: testenv
clusters:
- name: testenv
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: testenv-admin
  user:
    token: $token
contexts:
- name: testenv
  context:
    cluster: testenv
    user: testenv-admin
    namespace: default
KUBECONFIG
printf 'export KUBE_TESTENV_RUN=%q\nexport KUBECONFIG=%q\n' "$run" "$run/kubeconfig" >"$run/env"
echo "kube-testenv: $server ready after $((SECONDS - started)) s; state in $run" >&2
echo "$run"
