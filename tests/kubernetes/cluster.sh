#!/usr/bin/env bash
# tests/kubernetes/cluster.sh: a single-node Kubernetes for the tests, built here
# from the Go module proxy and Debian's packages (docs/guide/kubernetes-test-cluster.md).
#   build            build the five binaries once into the cache (reused when present)
#   up               start etcd, containerd and the control plane in namespaces of
#                    their own, wait for the node, print the KUBECONFIG
#   env              print `export KUBECONFIG=...` (and the cluster's state)
#   load-image IMG   docker save IMG | ctr -n k8s.io images import (the node's store)
#   down             stop everything, remove the state
#   check            exit 0 when the host is as it was before `up` (sysctls,
#                    iptables, mounts, processes, cgroups), else print what differs
# Needs root. The cluster lives in its own network, mount and PID namespaces: the
# kubelet's sysctls are written to files of the harness bind-mounted over
# /proc/sys inside, its iptables chains stay in the namespace, and killing the
# namespace's first process ends every process of the cluster.
set -euo pipefail

K8S_VERSION=v1.34.4
STAGING_VERSION=v0.34.4
CACHE_ROOT=${FORGE_K8S_CACHE_ROOT:-/var/cache/forge-review}
CACHE=$CACHE_ROOT/k8s-$K8S_VERSION
BIN=$CACHE/bin
GO=${GO:-/usr/local/go/bin/go}
BINARIES="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl"

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*" >&2; }

binaries_present() {
    local b
    [ -f "$BIN/.complete" ] || return 1
    for b in $BINARIES; do [ -x "$BIN/$b" ] || return 1; done
}

# shellcheck source=tests/go_cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../go_cache.sh"

# The staging modules are the `replace k8s.io/x => ./staging/src/k8s.io/x`
# lines of k8s.io/kubernetes' own go.mod.
write_go_mod() {
    local src=$1 gomod staging
    gomod=$("$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
        sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p') ||
        die "the Go module proxy did not serve k8s.io/kubernetes@$K8S_VERSION (GOPROXY=$("$GO" env GOPROXY))"
    [ -f "$gomod" ] || die "no go.mod for k8s.io/kubernetes@$K8S_VERSION from the proxy"
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$gomod")
    [ -n "$staging" ] || die "no staging modules found in $gomod"
    {
        echo "module forge-review/k8s-build"
        echo
        echo "go 1.24"
        echo
        echo "require k8s.io/kubernetes $K8S_VERSION"
        echo
        for m in $staging; do echo "replace $m => $m $STAGING_VERSION"; done
    } > "$src/go.mod"
    # go mod tidy keeps what the five commands import (the tools.go pattern).
    {
        printf '//go:build tools\n\npackage tools\n\nimport (\n'
        for b in $BINARIES; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
        printf ')\n'
    } > "$src/tools.go"
    say "$(echo "$staging" | wc -l) staging modules replaced by $STAGING_VERSION"
}

version_ldflags() {
    local p v=$K8S_VERSION minor
    minor=${v#v1.}; minor=${minor%%.*}
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
            "$p" "$v" "$p" "$p" "$minor" "$p"
    done
    printf -- '-s -w'
}

cmd_build() { go_cached_build binaries binaries_present build_binaries; }

build_binaries() {
    local src=$CACHE/src t0=$SECONDS pkgs="" b
    rm -rf "$src" "$BIN.tmp"; mkdir -p "$src" "$BIN.tmp"
    write_go_mod "$src"
    say "go mod tidy (k8s.io/kubernetes $K8S_VERSION)"
    (cd "$src" && nice -n 19 "$GO" mod tidy) || die "go mod tidy failed (is the Go module proxy reachable?)"
    say "go mod tidy: $((SECONDS - t0)) s"
    for b in $BINARIES; do pkgs="$pkgs k8s.io/kubernetes/cmd/$b"; done
    say "go build of $BINARIES (about 1,000 s of CPU, 2 GB of memory)"
    (cd "$src" && nice -n 19 "$GO" build -trimpath -ldflags "$(version_ldflags)" -o "$BIN.tmp/" $pkgs) ||
        die "go build failed (see above)"
    rm -rf "$BIN" && mv "$BIN.tmp" "$BIN" && touch "$BIN/.complete"
    say "built $BINARIES into $BIN in $((SECONDS - t0)) s"
}


STATE=${FORGE_K8S_STATE:-/var/tmp/forge-review-k8s}
PORT=${FORGE_K8S_PORT:-16443}
NAME=${STATE##*/}
BEFORE=$CACHE_ROOT/host-before-$NAME.txt
CGROUP=forge-k8s-$NAME
ETCD_DIR=$CACHE/etcd
NODE_IP=10.250.0.1
PAUSE_IMAGE=forge-review/pause:1
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
APT_PKGS="containerd runc iptables iproute2 containernetworking-plugins socat openssl util-linux procps"

need_root() { [ "$(id -u)" = 0 ] || die "needs root (it starts containerd and a kubelet)"; }

# Debian's packages; etcd's server only unpacked (no service is started).
cmd_deps() {
    local missing="" p
    for p in $APT_PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        say "installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2 ||
            die "apt-get install$missing failed"
    fi
    [ -x "$ETCD_DIR/usr/bin/etcd" ] && return 0
    mkdir -p "$CACHE/deb"
    (cd "$CACHE/deb" && rm -f etcd-server_*.deb &&
        { apt-get download etcd-server >&2 || { apt-get update -q >&2 && apt-get download etcd-server >&2; }; }) ||
        die "cannot download Debian's etcd-server package"
    rm -rf "$ETCD_DIR.tmp" && dpkg -x "$CACHE"/deb/etcd-server_*.deb "$ETCD_DIR.tmp" &&
        mv "$ETCD_DIR.tmp" "$ETCD_DIR" || die "cannot unpack etcd-server"
}

# ---- what `check` compares: only what the cluster could have changed ----
host_state() {
    local f
    for f in $SYSCTLS; do echo "sysctl $f=$(cat /proc/sys/$f)"; done
    iptables-save 2>/dev/null | grep -E 'KUBE|cni0|10\.88\.|10\.250\.' | sed 's/^/iptables /' || true
    awk -v s="$STATE" '$5 ~ "^" s || $5 ~ /^\/proc\/sys/ || $5 ~ /forge-k8s/ {print "mount " $5}' /proc/self/mountinfo
    ps -eo args= | grep -F -e "$BIN/" -e "$ETCD_DIR/" -e "$STATE/" | grep -v -e grep -e cluster.sh | sed "s/^/process /" || true
    ls -d /sys/fs/cgroup/*/"$CGROUP" 2>/dev/null | sed 's/^/cgroup /' || true
    ss -ltn 2>/dev/null | awk -v p=":$PORT" '$4 ~ p"$" {print "listen " $4}'
}

cmd_check() {
    [ -f "$BEFORE" ] || die "no record of the host before 'up' ($BEFORE): run 'up' first"
    if diff <(cat "$BEFORE") <(host_state) >&2; then
        say "host left as found (sysctls, iptables, mounts, processes, cgroups, listeners)"
    else
        die "the host differs from before 'up' (above: < before, > now)"
    fi
}

# ---- PKI and configuration ----
pki() {
    local d=$STATE/pki
    mkdir -p "$d"
    (cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=forge-k8s-ca 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc\n' "$NODE_IP" > san.ext
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile san.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 2 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null && openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null) ||
        die "openssl failed"
}

kubeconfig() { # FILE SERVER
    cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: forge-k8s
  cluster: {certificate-authority: $STATE/pki/ca.crt, server: "$2"}
users:
- name: admin
  user: {client-certificate: $STATE/pki/admin.crt, client-key: $STATE/pki/admin.key}
contexts:
- name: forge-k8s
  context: {cluster: forge-k8s, user: admin, namespace: default}
current-context: forge-k8s
KC
}

configs() {
    mkdir -p "$STATE/cni" "$STATE/logs" "$STATE/sysctl"
    kubeconfig "$STATE/inside.kubeconfig" https://127.0.0.1:6443
    kubeconfig "$STATE/admin.kubeconfig" "https://127.0.0.1:$PORT"
    cat > "$STATE/containerd.toml" <<CT
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$STATE/containerd.sock"
[ttrpc]
  address = "$STATE/containerd.ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni"
CT
    cat > "$STATE/cni/10-forge.conflist" <<CN
{"cniVersion": "0.4.0", "name": "forge-k8s", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$STATE/cni-ipam", "ranges": [[{"subnet": "10.88.0.0/16"}]]}},
  {"type": "loopback"}]}
CN
    cat > "$STATE/kubelet.yaml" <<KY
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP
containerRuntimeEndpoint: unix://$STATE/containerd.sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: AlwaysAllow}
failSwapOn: false
address: 0.0.0.0
healthzBindAddress: 127.0.0.1
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
serializeImagePulls: false
KY
}

# ---- inside the namespaces (the first process of the PID namespace) ----
bg() { # NAME CMD...: started in the background, its log in $STATE/logs
    local name=$1; shift
    "$@" > "$STATE/logs/$name.log" 2>&1 &
}

wait_for() { # WHAT SECONDS CMD...
    local what=$1 n=$2; shift 2
    for _ in $(seq $((n * 4))); do "$@" > /dev/null 2>&1 && return 0; sleep 0.25; done
    echo "cluster.sh: $what did not come up in $n s" >&2; return 1
}

inside_mounts() {
    local f name
    mount --make-rprivate /
    mount -t tmpfs tmpfs /run
    mkdir -p "$STATE/varlog" "$STATE/varlib" "$STATE/cni-ipam"
    mount --bind "$STATE/varlog" /var/log
    mount --bind "$STATE/varlib" /var/lib
    # The kubelet's kernel tunables land in these files, not in the kernel.
    for f in $SYSCTLS; do
        name=${f//\//.}
        cat "/proc/sys/$f" > "$STATE/sysctl/$name"
        mount --bind "$STATE/sysctl/$name" "/proc/sys/$f"
    done
    mount --make-rshared /
}

inside_net() {
    ip link set lo up
    # The node's address, on the namespace's own loopback device (a dummy
    # device may not be available): not a loopback address to Kubernetes.
    ip addr add "$NODE_IP/32" dev lo
    # Nothing leaves the namespace: every other address is unreachable at once.
    ip route add unreachable default
}

apiserver() {
    local p=$STATE/pki
    "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --secure-port=6443 \
        --advertise-address="$NODE_IP" --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
        --client-ca-file="$p/ca.crt" --service-account-key-file="$p/sa.pub" \
        --service-account-signing-key-file="$p/sa.key" --service-account-issuer=https://kubernetes.default.svc \
        --service-cluster-ip-range=10.0.0.0/24 --authorization-mode=Node,RBAC \
        --kubelet-client-certificate="$p/admin.crt" --kubelet-client-key="$p/admin.key" \
        --kubelet-preferred-address-types=Hostname,InternalIP --enable-admission-plugins=NodeRestriction \
        --allow-privileged=false --profiling=false
}

cmd_inside() {
    local p=$STATE/pki k=$STATE/inside.kubeconfig
    inside_mounts
    inside_net
    bg etcd "$ETCD_DIR/usr/bin/etcd" --data-dir "$STATE/etcd" --listen-client-urls http://127.0.0.1:2379 \
        --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
        --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380
    bg containerd containerd --config "$STATE/containerd.toml"
    bg apiserver apiserver
    bg forward socat "UNIX-LISTEN:$STATE/apiserver.sock,fork" TCP:127.0.0.1:6443
    wait_for kube-apiserver 120 "$BIN/kubectl" --kubeconfig "$k" get --raw /readyz || exit 1
    bg controller-manager "$BIN/kube-controller-manager" --kubeconfig "$k" --leader-elect=false \
        --bind-address=127.0.0.1 --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
        --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
        --use-service-account-credentials=false
    bg scheduler "$BIN/kube-scheduler" --kubeconfig "$k" --leader-elect=false --bind-address=127.0.0.1
    bg kubelet "$BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$k" --hostname-override=localhost \
        --node-ip="$NODE_IP" --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet-pki"
    touch "$STATE/inside.ready"
    # The namespace lives as long as this process: `down` kills it.
    while :; do sleep 3600; done
}

# ---- on the host ----

# The kubelet's cgroupRoot must exist in every hierarchy (cgroup v1 here).
cgroups() {
    local d
    for d in /sys/fs/cgroup/*/; do
        [ -d "$d" ] && [ -w "$d" ] || continue
        mkdir -p "$d$CGROUP" 2>/dev/null || continue
        if [ -f "${d}cpuset.cpus" ]; then
            cat "${d}cpuset.cpus" > "$d$CGROUP/cpuset.cpus"
            cat "${d}cpuset.mems" > "$d$CGROUP/cpuset.mems"
        fi
    done
}
inner_pid() { cat "$STATE/inner.pid" 2>/dev/null; }

running() { local p; p=$(inner_pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# The pause container: a static C program as a one-file image, built
# with docker (no registry needed) and imported into the node's store.
pause_image() {
    local src; src=$(cd "$(dirname "$0")" && pwd)/pause.c
    if [ ! -f "$CACHE/pause.tar" ]; then
        local d; d=$(mktemp -d)
        cc -static -O2 -o "$d/pause" "$src" || die "cannot build pause.c (cc -static)"
        printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' > "$d/Dockerfile"
        docker build -q -t "$PAUSE_IMAGE" "$d" > /dev/null || die "docker build of the pause image failed"
        docker save "$PAUSE_IMAGE" > "$CACHE/pause.tar.tmp" && mv "$CACHE/pause.tar.tmp" "$CACHE/pause.tar"
        rm -rf "$d"
    fi
    ctr --address "$STATE/containerd.sock" -n k8s.io images import "$CACHE/pause.tar" > /dev/null ||
        die "cannot import the pause image"
}

cmd_up() {
    need_root
    binaries_present || die "no binaries in $BIN: run 'cluster.sh build' first (15-30 min)"
    if running; then say "already up"; cmd_env; return 0; fi
    cmd_deps
    [ -e "$STATE" ] && cmd_down
    host_state > "$BEFORE"
    local t0=$SECONDS
    mkdir -p "$STATE"
    pki
    configs
    cgroups
    setsid unshare --pid --fork --mount-proc --net --mount --propagation private \
        bash "$(readlink -f "$0")" _inside > "$STATE/logs/inside.log" 2>&1 < /dev/null &
    local u=$!
    for _ in $(seq 100); do
        [ -s /proc/$u/task/$u/children ] && break; sleep 0.1
    done
    awk '{print $1}' /proc/$u/task/$u/children > "$STATE/inner.pid"
    echo $u > "$STATE/unshare.pid"
    wait_for "containerd" 60 test -S "$STATE/containerd.sock" || { cat "$STATE/logs/"*.log >&2; cmd_down; die "up failed"; }
    pause_image
    setsid socat "TCP-LISTEN:$PORT,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$STATE/apiserver.sock" \
        > "$STATE/logs/host-forward.log" 2>&1 < /dev/null &
    echo $! > "$STATE/forward.pid"
    export KUBECONFIG=$STATE/admin.kubeconfig
    wait_for "the node" 180 sh -c "'$BIN/kubectl' get node localhost -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" ||
        { tail -n 20 "$STATE/logs/"*.log >&2; cmd_down; die "up failed: logs above"; }
    wait_for "the default service account" 60 "$BIN/kubectl" get serviceaccount default || true
    say "up in $((SECONDS - t0)) s"
    cmd_env
}

cmd_env() {
    running || die "not up (cluster.sh up)"
    echo "export KUBECONFIG=$STATE/admin.kubeconfig"
    echo "export PATH=$BIN:\$PATH"
    echo "export FORGE_K8S_STATE=$STATE FORGE_K8S_BEFORE=$BEFORE"
}

cmd_load_image() {
    local img=${1:-}
    [ -n "$img" ] || die "usage: cluster.sh load-image IMAGE"
    running || die "not up (cluster.sh up)"
    docker image inspect "$img" > /dev/null 2>&1 || die "no image '$img' in docker (build it first)"
    docker save "$img" | ctr --address "$STATE/containerd.sock" -n k8s.io images import - > /dev/null ||
        die "cannot import '$img' into the node's containerd"
    say "image $img loaded"
}

cmd_down() {
    local p
    # socat forks one process per connection: its whole group.
    p=$(cat "$STATE/forward.pid" 2>/dev/null) && [ -n "$p" ] && kill -9 -- "-$p" 2>/dev/null || true
    for f in inner.pid unshare.pid; do
        p=$(cat "$STATE/$f" 2>/dev/null) || continue
        [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
    done
    # The PID namespace's first process gone, the kernel kills the rest.
    for _ in $(seq 100); do
        host_state | grep -q '^process ' || break; sleep 0.1
    done
    # Emptied as the kernel finishes the killed processes: retried a while.
    for _ in $(seq 50); do
        find /sys/fs/cgroup/*/"$CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        ls -d /sys/fs/cgroup/*/"$CGROUP" > /dev/null 2>&1 || break
        sleep 0.2
    done
    rm -rf "$STATE"
    say "down"
}

case ${1:-} in
    build) cmd_build ;;
    deps) need_root; cmd_deps ;;
    up) cmd_up ;;
    down) need_root; cmd_down ;;
    env) cmd_env ;;
    load-image) cmd_load_image "${2:-}" ;;
    check) cmd_check ;;
    _inside) cmd_inside ;;
    *) die "usage: cluster.sh build|deps|up|down|env|load-image IMAGE|check" ;;
esac
