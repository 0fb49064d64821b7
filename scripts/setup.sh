#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything the build, the VM harness, the tests and the benchmark
# need on a Debian bookworm host, as root, and the Debian 13 (trixie) root
# with trixie's kernels that the tests use beside the host's
# (scripts/trixie-root.sh). Idempotent: when every package and
# every extracted source is already present it only checks and returns.
#
#   scripts/setup.sh            install what is missing
#   scripts/setup.sh --print    print the kernel versions it would use
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${PFB_SRCDIR:-/var/cache/pfifo-bulk}

log() { echo "setup: $*" >&2; }

need_root() {
	[ "$(id -u)" -eq 0 ] || { log "must run as root (apt-get install)"; exit 1; }
}

apt_updated=
apt_update_once() {
	[ -n "$apt_updated" ] && return
	log "apt-get update"
	apt-get update -qq >/dev/null
	apt_updated=1
}

# An installable package of that name, or nothing: apt-cache policy shows a
# candidate ("apt-cache show" succeeds, silent, for a name only some other
# package replaces).
candidate() {
	LC_ALL=C apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { ok = 1 } END { exit !ok }' &&
		echo "$1"
}

# The newest "6.12.N+deb12" kernel bookworm's archives offer with headers
# and an image, as the two package names. The signed image follows the
# headers by days (6.12.118 had headers and only the -unsigned image for a
# while); the -unsigned one is the same kernel, and does for a guest.
newest_612() {
	local abi image
	apt_update_once
	for abi in $(apt-cache pkgnames linux-headers-6.12. |
		     sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p' |
		     sort -rV); do
		candidate "linux-headers-$abi-amd64" >/dev/null || continue
		image=$(candidate "linux-image-$abi-amd64" ||
			candidate "linux-image-$abi-amd64-unsigned") || continue
		echo "$image linux-headers-$abi-amd64"
		return
	done
}

base_pkgs=(
	build-essential bc kmod flex bison libelf-dev pkg-config xz-utils
	busybox-static cpio
	libmnl-dev iproute2 ethtool linux-perf sparse dkms gnuplot-nox
	python3 python3-pyroute2 jq gojq valgrind man-db dpkg-dev iputils-ping zstd
	debootstrap rsync
	linux-image-amd64 linux-headers-amd64 linux-source-6.1 linux-source-6.12
)

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null |
			grep -qx installed || echo "$p"
	done
}

install_pkgs() {
	local k612 todo
	if [ -z "$(missing "${base_pkgs[@]}")" ] &&
	   ls /usr/src/linux-headers-6.12.*-amd64 >/dev/null 2>&1 &&
	   ls /boot/vmlinuz-6.12.*-amd64 >/dev/null 2>&1; then
		return
	fi
	k612=$(newest_612)
	[ -n "$k612" ] || { log "no 6.12.*+deb12-amd64 kernel with headers in the archive"; exit 1; }
	todo=$(missing "${base_pkgs[@]}" $k612)
	[ -z "$todo" ] && return
	apt_update_once
	log "installing: $(echo $todo)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$todo >/dev/null
}

# QEMU from bookworm-backports (10.0), not bookworm's 7.2: under 7.2's TCG
# the 6.12 guest crashed in about one loop in eight of smoke.sh,
# refnic_pair.sh and refnic_doorbell.sh (double faults and NULL writes in
# pktgen's thread, the saved EFLAGS holding half a heap pointer: the
# emulated flags, not the kernel), none in 30 loops under 10.0. The
# backports suite keeps apt's low default priority: only QEMU and the
# libraries it needs come from it.
qemu_min=1:10.0
install_qemu() {
	local have list=/etc/apt/sources.list.d/pfifo-bulk-backports.list

	have=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
	[ -n "$have" ] && dpkg --compare-versions "$have" ge "$qemu_min" && return
	if [ ! -f "$list" ]; then
		echo "deb http://deb.debian.org/debian bookworm-backports main" > "$list"
		apt_updated=
	fi
	apt_update_once
	log "installing: qemu-system-x86 (bookworm-backports)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t bookworm-backports qemu-system-x86 >/dev/null
	have=$(dpkg-query -W -f='${Version}' qemu-system-x86)
	dpkg --compare-versions "$have" ge "$qemu_min" ||
		{ log "qemu-system-x86 $have is older than $qemu_min"; exit 1; }
}

# checkpatch.pl and tdc come from the kernel source tarballs (bookworm's 6.1
# and 6.12, and the trixie root's newest); extract only
# the parts we use (scripts/, tools/testing/selftests/tc-testing and what
# checkpatch reads) once per tarball.
extract_sources() {
	local tb name dest
	mkdir -p "$srcdir"
	for tb in /usr/src/linux-source-6.1.tar.xz /usr/src/linux-source-6.12.tar.xz \
		  $("$top/scripts/trixie-root.sh" --source); do
		name=$(basename "$tb" .tar.xz)
		dest=$srcdir/$name
		[ -f "$dest/.extracted" ] && continue
		log "extracting $tb"
		rm -rf "$dest"
		mkdir -p "$dest"
		tar -xJf "$tb" -C "$dest" --strip-components=1 \
			--wildcards "$name/scripts" "$name/tools/testing/selftests/tc-testing" \
			"$name/tools/testing/selftests/net/lib.sh" "$name/tools/testing/selftests/kselftest" \
			"$name/Documentation/dev-tools/checkpatch.rst" \
			"$name/MAINTAINERS" "$name/Makefile" 2>/dev/null || true
		[ -f "$dest/scripts/checkpatch.pl" ] || { log "no checkpatch.pl in $tb"; exit 1; }
		touch "$dest/.extracted"
	done
}

# apt-get source needs deb-src entries; add them for the archives this host
# already uses for binaries (same mirrors, same keys), once.
add_deb_src() {
	local f out=/etc/apt/sources.list.d/pfifo-bulk-src
	grep -rqsE '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ && return
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -q '^Types: *deb$' "$f" && grep -qi debian-archive-keyring "$f" &&
			sed 's/^Types: *deb$/Types: deb-src/' "$f" || true
	done > "$out.sources"
	[ -s "$out.sources" ] || rm -f "$out.sources"
	grep -sE '^deb [^ ]*(debian|security)' /etc/apt/sources.list |
		sed 's/^deb /deb-src /' > "$out.list" || true
	[ -s "$out.list" ] || rm -f "$out.list"
	apt_updated=
}

# The tc plugin is built against the iproute2 headers of the installed tc.
# No package ships them, so fetch the distribution's source package of the
# exact installed version.
iproute2_source() {
	local ver dest list
	ver=$(dpkg-query -W -f='${Version}' iproute2)
	dest=$srcdir/iproute2-$ver
	[ -f "$dest/.extracted" ] && return
	log "fetching iproute2 $ver source"
	add_deb_src
	apt_update_once
	rm -rf "$dest" "$dest.tmp"
	mkdir -p "$dest.tmp"
	(cd "$dest.tmp" && apt-get source -qq --download-only "iproute2=$ver" >/dev/null &&
		dpkg-source -x --skip-patches ./*.dsc src >/dev/null)
	mv "$dest.tmp/src" "$dest"
	rm -rf "$dest.tmp"
	touch "$dest/.extracted"
}

if [ "${1:-}" = "--print" ]; then
	ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||'
	exit 0
fi

need_root
install_pkgs
install_qemu
"$top/scripts/trixie-root.sh"
extract_sources
"$top/scripts/i386-headers.sh"
iproute2_source
log "ok"
