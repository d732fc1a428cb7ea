#!/bin/sh
# apt-ensure.sh PACKAGE... - install only the packages that are not installed yet.
#
# The Dockerfile runs this in both stages. On the offline bases made by
# docker/build-base.sh every package is already there, so nothing touches the
# network; on the registry's debian:bookworm(-slim) the missing ones come from
# the image's apt sources. apt's lists and downloads are removed afterwards so
# the layer stays small.
set -eu
missing=
for p in "$@"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "apt-ensure: already installed: $*"
	exit 0
fi
echo "apt-ensure: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is wanted
apt-get install -y --no-install-recommends $missing
apt-get clean
rm -rf /var/lib/apt/lists/*
