#!/bin/sh
# run-demo-kubernetes.sh [BUILD_DIR] - the demo review loop of run-demo.sh, as a
# Kubernetes Job (engine kubernetes) on the test cluster of tests/kubernetes/cluster.sh.
#
# The same workspace, agents and review.md as run-demo-docker.sh: the image's
# demo agents and default skill. The workspace is a PersistentVolume on a
# directory of this host (hostPath, the cluster is single-node), bound to a
# claim that forge-runner mounts at /workspace; every cycle is reported from
# the pod's log stream. Needs root, Docker (to build the image) and the
# cluster's binaries (bash tests/kubernetes/cluster.sh build: 15-30 min once).
# A cluster that is not up is started and stopped again at the end.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
. "$here/lib-demo.sh"
demo_build_dir "${1:-}"
runner=$build/runner/forge-runner
image=${FORGE_IMAGE:-forge-review:latest}
agents=/usr/local/share/forge-review/examples/agents
cluster=$repo/tests/kubernetes/cluster.sh

die() { echo "run-demo-kubernetes.sh: $*" >&2; exit 2; }
[ -x "$runner" ] || die "no forge-runner at '$runner': build first (bash scripts/demo.sh)"
[ "$(id -u)" = 0 ] || die "needs root (the test cluster runs containerd and a kubelet)"
docker image inspect "$image" >/dev/null 2>&1 || die "no image $image: build it first (sh examples/run-demo-docker.sh)"
started=0
if ! bash "$cluster" env >/dev/null 2>&1; then
	echo "== cluster: tests/kubernetes/cluster.sh up"
	bash "$cluster" up >/dev/null
	started=1
fi
eval "$(bash "$cluster" env)"
bash "$cluster" load-image "$image"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/forge-demo-k8s.XXXXXX")
chmod 755 "$tmp"
demo_prepare "$tmp"
chmod -R a+rwX "$tmp/workspace"
claim=forge-demo-$(basename "$tmp" | tr 'A-Z.' 'a-z-')
kubectl create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "$claim"},
  "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
   "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "$tmp/workspace", "type": "Directory"},
   "claimRef": {"namespace": "default", "name": "$claim"}}},
 {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "$claim", "namespace": "default"},
  "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "$claim",
   "resources": {"requests": {"storage": "1Gi"}}}}]}
EOF
echo "== forge-runner run --engine kubernetes --image $image --workspace-volume $claim"
status=0
FORGE_WORKER_CMD="$agents/demo-worker.sh" \
FORGE_REVIEWER_CMD="$agents/demo-reviewer.sh" \
FORGE_AGENT_TIMEOUT=60 FORGE_AGENT_IDLE_TIMEOUT=60 \
	"$runner" run --engine kubernetes --image "$image" --step implement_task \
	--skill implement-task --task-key CALC-1 --task-file "$tmp/task.json" \
	--workspace-volume "$claim" --result "$tmp/result.json" --timeout 600 || status=$?
demo_report "$tmp" long
run_id=$(sed -n 's/^[[:space:]]*"run_id":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' "$tmp/result.json" 2>/dev/null | head -n 1)
if [ -n "$run_id" ]; then
	echo "== objects left of run $run_id: $(kubectl get jobs,pods,configmaps,secrets -l forge-review/run-id="$run_id" -o name | wc -l)"
fi
kubectl delete pvc "$claim" --wait=false >/dev/null
kubectl delete pv "$claim" --wait=false >/dev/null
if [ "$started" = 1 ]; then
	bash "$cluster" down >/dev/null
	bash "$cluster" check
fi
echo "== forge-runner exit code: $status (files kept in $tmp)"
exit "$status"
