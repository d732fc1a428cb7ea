#!/bin/sh
# build-base.sh - make the Debian base images for docker/Dockerfile without a registry.
#
# A machine with a Docker Engine but no registry starts with no images, so
# "FROM debian:bookworm" cannot be pulled. This script builds the two bases the
# Dockerfile names by default, from the Debian mirror the host's apt already
# uses: a minimal bookworm root filesystem (debootstrap --variant=minbase),
# imported with "docker import" and tagged debian:bookworm (build base) and
# debian:bookworm-slim (runtime base). docker/Dockerfile then builds unchanged.
#
# By default the bases already hold the packages the Dockerfile needs (build:
# build-essential cmake pkg-config libuv1-dev libcjson-dev libyaml-dev libsodium-dev;
# runtime: libuv1 libcjson1 libyaml-0-2 libsodium23 git), so "docker build" needs no network at
# all. The Dockerfile installs only what is missing, so it also builds from the
# real debian images, or from --plain bases when containers reach the mirror.
#
# Idempotent: a tag that already holds this script's image for the same
# inputs is left alone (--force rebuilds). Root filesystems are cached as
# tarballs under the cache directory, so a rerun after "docker rmi" is an
# import of a few seconds. A tag holding an image this script did not make
# (a real debian image pulled from a registry) is never overwritten without
# --force.
#
# --force re-imports the tags from the cached tarballs; --refresh also runs
# debootstrap again (new packages from the mirror). --plain makes bases with
# no extra packages (the Dockerfile then installs them with apt-get, which
# needs containers that reach the mirror).
#
# Usage: docker/build-base.sh [--force] [--refresh] [--plain] [--mirror URL]
#                             [--cache-dir DIR] [--build-tag T] [--runtime-tag T]
# Environment: FORGE_DEBIAN_MIRROR (mirror URL), FORGE_BASE_CACHE (cache dir).
# Exit: 0 the tags exist, 1 something failed (said on stderr), 2 usage error.
set -eu

SUITE=bookworm
SCRIPT_VERSION=1   # bump to invalidate cached tarballs when the recipe changes
LABEL_KEY=org.forge-review.base
BUILD_PKGS="build-essential cmake pkg-config libuv1-dev libcjson-dev libyaml-dev libsodium-dev"
# git: the change set of a git workspace (entrypoint/changeset.c runs the git
# CLI; without it the entrypoint falls back to its manifest, with no diff).
RUNTIME_PKGS="libuv1 libcjson1 libyaml-0-2 libsodium23 git"

force=0
refresh=0
plain=0
mirror=${FORGE_DEBIAN_MIRROR:-}
cache_dir=${FORGE_BASE_CACHE:-/var/cache/forge-review}
build_tag=debian:$SUITE
runtime_tag=debian:$SUITE-slim

say() { printf 'build-base: %s\n' "$*" >&2; }
die() { printf 'build-base: error: %s\n' "$*" >&2; exit 1; }
usage() {
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^Exit:/p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--force) force=1 ;;
	--refresh) force=1; refresh=1 ;;
	--plain) plain=1 ;;
	--mirror) [ $# -ge 2 ] || usage; mirror=$2; shift ;;
	--cache-dir) [ $# -ge 2 ] || usage; cache_dir=$2; shift ;;
	--build-tag) [ $# -ge 2 ] || usage; build_tag=$2; shift ;;
	--runtime-tag) [ $# -ge 2 ] || usage; runtime_tag=$2; shift ;;
	-h|--help) usage ;;
	*) say "unknown option '$1'"; usage ;;
	esac
	shift
done

# The first one-line or deb822 apt source that serves "$SUITE main" and is not
# the security archive: that is the mirror the host already trusts and reaches.
host_mirror() {
	{
		[ -f /etc/apt/sources.list ] && awk -v s="$SUITE" '
			$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			  if ($(i+1) == s && $0 ~ / main( |$)/) print $i }' /etc/apt/sources.list
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk -v s="$SUITE" '
				function flush() { if (deb && suite && main) for (k = 1; k <= n; k++) print u[k];
				                   deb = suite = main = n = 0 }
				/^[ \t]*$/ { flush(); next }
				/^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
				/^URIs:/ { n = split(substr($0, 6), u, " ") }
				/^Suites:/ { suite = (index(" " substr($0, 8) " ", " " s " ") > 0) }
				/^Components:/ { main = ($0 ~ /[ \t]main([ \t]|$)/) }
				END { flush() }' "$f"
		done
		for f in /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			awk -v s="$SUITE" '$1 == "deb" && $3 == s && / main( |$)/ { print $2 }' "$f"
		done
	} 2>/dev/null | grep -v -- '-security' | head -n 1
}

ensure_tools() {
	[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap needs it)"
	command -v docker >/dev/null 2>&1 || die "docker CLI not found"
	docker info >/dev/null 2>&1 || die "no Docker Engine answers 'docker info'"
	if ! command -v debootstrap >/dev/null 2>&1; then
		say "installing debootstrap with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
			die "cannot install debootstrap"
	fi
}

# The image id behind a tag, or nothing.
image_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
image_label() {
	docker image inspect -f "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
}

# Cache key: everything that changes the root filesystem's content.
cache_key() {
	printf '%s\n' "$SCRIPT_VERSION" "$SUITE" "$mirror" "$1" "$2" |
		sha256sum | cut -c1-16
}

# Lazily unmounts whatever a failed debootstrap left mounted (proc, sys, dev)
# below $1, so that removing the tree never walks into a live kernel filesystem.
unmount_below() {
	awk -v p="$1/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
}

work=
cleanup() {
	if [ -n "$work" ] && [ -d "$work" ]; then
		unmount_below "$work"
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Removes what an image never needs: apt's downloaded lists and packages, logs,
# and on the runtime base the documentation (copyright files stay) plus a dpkg
# rule so that later installs skip it too, as Debian's own slim images do.
trim_rootfs() {
	r=$1 kind=$2
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin \
		"$r"/var/cache/apt/archives/*.deb "$r"/var/log/*.log "$r"/var/log/apt/* \
		"$r"/tmp/* "$r"/root/.cache
	[ -f "$r/etc/machine-id" ] && : >"$r/etc/machine-id"
	[ "$kind" = runtime ] || return 0
	mkdir -p "$r/etc/dpkg/dpkg.cfg.d"
	cat >"$r/etc/dpkg/dpkg.cfg.d/forge-slim" <<'CFG'
# Written by forge-review docker/build-base.sh: keep the runtime base small.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
CFG
	find "$r/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete 2>/dev/null || true
	find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
	rm -rf "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* \
		"$r"/usr/share/lintian/*
}

# Debootstraps one root filesystem and stores it as the tarball $3.
make_rootfs() {
	kind=$1 pkgs=$2 tarball=$3
	work=$cache_dir/work/$kind.$$
	rm -rf "$work"
	mkdir -p "$work" "$cache_dir/debs"
	include=
	[ -z "$pkgs" ] || include=--include=$(printf '%s' "$pkgs" | tr ' ' ',')
	say "debootstrap --variant=minbase $include $SUITE from $mirror (log: $work/log)"
	start=$(date +%s)
	if ! debootstrap --variant=minbase $include --cache-dir="$cache_dir/debs" \
		"$SUITE" "$work/rootfs" "$mirror" >"$work/log" 2>&1; then
		tail -n 20 "$work/log" >&2
		die "debootstrap of the $kind base failed"
	fi
	trim_rootfs "$work/rootfs" "$kind"
	tar -C "$work/rootfs" --numeric-owner -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	say "$kind root filesystem ready in $(($(date +%s) - start))s: $tarball ($(du -h "$tarball" | cut -f1))"
	cleanup
	work=
}

# Makes one tagged base: skips, reuses the cached tarball, or debootstraps.
make_base() {
	kind=$1 tag=$2 pkgs=$3
	key=$(cache_key "$kind" "$pkgs")
	if [ -n "$(image_id "$tag")" ] && [ "$force" -eq 0 ]; then
		if [ "$(image_label "$tag" "$LABEL_KEY.key")" = "$key" ]; then
			say "$tag: up to date ($kind base, key $key), skipped"
			return 0
		fi
		if [ -z "$(image_label "$tag" "$LABEL_KEY")" ]; then
			say "$tag: exists and was not made by this script (a registry image?), left alone; --force replaces it"
			return 0
		fi
		say "$tag: made from other inputs, rebuilding"
	fi
	tarball=$cache_dir/rootfs/$SUITE-$kind-$key.tar
	mkdir -p "$cache_dir/rootfs"
	if [ -f "$tarball" ] && [ "$refresh" -eq 0 ]; then
		say "$kind root filesystem cached: $tarball"
	else
		make_rootfs "$kind" "$pkgs" "$tarball"
	fi
	say "docker import $tarball as $tag"
	docker import \
		--change "LABEL $LABEL_KEY=$kind" \
		--change "LABEL $LABEL_KEY.key=$key" \
		--change "LABEL $LABEL_KEY.mirror=$mirror" \
		--change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		--change 'CMD ["bash"]' \
		"$tarball" "$tag" >/dev/null
	say "$tag: $(docker image inspect -f '{{.Size}}' "$tag" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
}

ensure_tools
if [ -z "$mirror" ]; then
	mirror=$(host_mirror)
	if [ -z "$mirror" ]; then
		mirror=http://deb.debian.org/debian
		say "no '$SUITE main' source found in /etc/apt; using $mirror"
	else
		say "mirror from the host's apt sources: $mirror"
	fi
else
	say "mirror from FORGE_DEBIAN_MIRROR or --mirror: $mirror"
fi
mkdir -p "$cache_dir"
# Two concurrent runs (a test and a user) would debootstrap into the same tags.
exec 9>"$cache_dir/.lock"
flock -w 3600 9 || die "cannot lock '$cache_dir/.lock'"

if [ "$plain" -eq 1 ]; then
	make_base build "$build_tag" ""
	make_base runtime "$runtime_tag" ""
else
	make_base build "$build_tag" "$BUILD_PKGS"
	make_base runtime "$runtime_tag" "$RUNTIME_PKGS"
fi
say "done: build base $build_tag, runtime base $runtime_tag"
