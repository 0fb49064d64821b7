#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 13 (trixie) root, as root: made by debootstrap from Debian's
# archive under /var/cache/pfifo-bulk/trixie-root, with gcc 14 and what the
# builds and the selftests need, the newest 6.12.*+deb13 kernel and the
# newest trixie-backports kernel, each with its headers, image and module
# tree. Debian 13's kbuild needs glibc >= 2.38 and gcc 14, so modules for
# its kernels are built in here (chroot), and a guest booting one of them
# uses this root as its userspace (tools/vm/run, PFB_VM_USERSPACE).
# Re-used while its package list is unchanged: the list's hash is kept in
# .pfb-stamp; a changed list installs what is missing into the same root.
#
#   scripts/trixie-root.sh           make or update the root
#   scripts/trixie-root.sh --print   print the root's kernel versions
#   scripts/trixie-root.sh --source  print the root's kernel source tarball
#   scripts/trixie-root.sh --chroot CMD...  run CMD in the root (with /proc,
#                                    the checkout at its own path)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
root=${PFB_TRIXIE_ROOT:-/var/cache/pfifo-bulk/trixie-root}
mirror=${PFB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
stamp=$root/.pfb-stamp

log() { echo "trixie-root: $*" >&2; }

# Build: gcc 14 (the compiler of trixie's kernels), kbuild, sparse, libmnl.
# Guest: every command the selftests require (busybox-static for the
# harness's poweroff, util-linux for setpriv and taskset), and perf for
# the benchmark's profiles.
pkgs=(
	build-essential gcc-14 make bc kmod flex bison libelf-dev pkg-config
	sparse libmnl-dev xz-utils zstd cpio dkms
	iproute2 ethtool busybox-static python3 python3-pyroute2 jq gojq
	valgrind iputils-ping procps util-linux linux-perf
)

# The 6.12 series of trixie itself, and trixie-backports' newest series
# (regular expressions).
kernel_series=('6\.12' '[0-9]+\.[0-9]+')

# in_root CMD...: CMD in the root, with /proc and the checkout at its own
# path, mounted in a mount namespace of its own: they vanish with it, and
# runs side by side (two checkouts, two kernels) do not unmount each
# other's.
in_root() {
	mkdir -p "$root$top"
	unshare --mount --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount --bind "$2" "$1$2" || exit 1
		mount -t devpts -o newinstance devpts "$1/dev/pts" 2>/dev/null
		r=$1
		shift 2
		exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "$top" "$@"
}

# kernels: the root's kernel versions (an image and a build tree each).
kernels() {
	local v
	for v in $(ls "$root"/boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
		[ -d "$root/lib/modules/$v/build" ] && echo "$v"
	done
}

# newest_source: the newest kernel source tarball in the root.
newest_source() {
	ls "$root"/usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1
}

case ${1:-} in
--print)
	kernels
	exit 0
	;;
--source)
	newest_source
	exit 0
	;;
--chroot)
	shift
	[ -f "$stamp" ] || { log "no root at $root: run 'make setup'"; exit 2; }
	in_root sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
	exit
	;;
esac

[ "$(id -u)" -eq 0 ] || { log "must run as root (debootstrap, chroot)"; exit 1; }

want=$(printf "%s\n" "${pkgs[@]}" "$mirror" | sha256sum | cut -c1-16)

# The sparse of make's C=1 in this root (the project's Makefile prefers it
# to the root's own): forky's, unpacked, not installed. Kernels since 6.15
# accept a checker only if scripts/checker-valid.sh finds that it knows
# __typeof_unqual__ (their headers use it under sparse); trixie's sparse
# 0.6.4 does not, and without the script (Debian's linux-headers packages
# leave it out) kbuild turns C=1 off with a notice and builds unchecked.
sparse=/opt/pfb-sparse/usr/bin/sparse

# headers_without_checker: the root's kbuild trees whose Makefile runs
# scripts/checker-valid.sh but lack it.
headers_without_checker() {
	local mk
	for mk in "$root"/usr/src/linux-headers-*/Makefile; do
		grep -q checker-valid.sh "$mk" &&
			! [ -e "${mk%/Makefile}/scripts/checker-valid.sh" ] &&
			dirname "$mk"
	done
	return 0
}
# ready: a kernel of every series is in the root, and a kernel source.
ready() {
	local series have
	have=$(kernels)
	for series in "${kernel_series[@]}"; do
		grep -qE "^($series)\." <<< "$have" || return 1
	done
	ls "$root"/usr/src/linux-source-*.tar.xz >/dev/null 2>&1 &&
		[ -x "$root$sparse" ] && ! headers_without_checker | grep -q .
}

if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && ready; then
	exit 0
fi

start=$SECONDS
if ! [ -f "$root/.pfb-debootstrapped" ]; then
	log "debootstrap trixie into $root"
	rm -rf "$root"
	mkdir -p "$root"
	debootstrap --variant=minbase --include=ca-certificates \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		trixie "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
		{ log "debootstrap failed:"; tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
	touch "$root/.pfb-debootstrapped"
fi

cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror trixie main
deb $mirror trixie-updates main
deb $mirror trixie-backports main
deb http://deb.debian.org/debian-security trixie-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No initramfs and no boot loader for the kernels: the harness brings its
# own initramfs, and the image packages are unpacked, not configured.
log "apt-get update; installing: ${pkgs[*]}"
in_root apt-get update -qq >/dev/null
in_root apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null

# has_candidate PKG: the root's archives offer PKG (awk reads all of
# apt-cache's output: no SIGPIPE for pipefail to report).
has_candidate() {
	in_root apt-cache policy "$1" |
		awk '$1 == "Candidate:" && $2 != "(none)" { ok = 1 } END { exit !ok }'
}

# newest_kernel SERIES-REGEX: the newest "SERIES.N+deb13-amd64" release the
# root's archives have headers and an image for (the signed image may lag
# the headers by days; the -unsigned one is the same kernel). Newer
# kernels ship the image as linux-binary-* and the module tree as
# linux-modules-*; linux-image-* then only depends on both.
newest_kernel() {
	local abi
	for abi in $(in_root apt-cache pkgnames linux-headers- |
		     sed -En "s/^linux-headers-(($1)\.[0-9]+\+deb13(\+[0-9]+)?)-amd64\$/\1/p" |
		     sort -rV); do
		has_candidate "linux-headers-$abi-amd64" || continue
		for image in linux-binary-$abi-amd64 linux-image-$abi-amd64 \
			     linux-image-$abi-amd64-unsigned; do
			has_candidate "$image" || continue
			echo "$abi-amd64 $image"
			return
		done
	done
}

for series in "${kernel_series[@]}"; do
	read -r kver image <<< "$(newest_kernel "$series")" || true
	[ -n "${kver:-}" ] || { log "no $series.*+deb13 kernel with headers and image"; exit 1; }
	if ! [ -d "$root/lib/modules/$kver/build" ] || ! [ -r "$root/boot/vmlinuz-$kver" ]; then
		log "kernel $kver ($image)"
		in_root apt-get install -y -qq --no-install-recommends \
			"linux-headers-$kver" >/dev/null
		# The image and module tree unpacked without the packages'
		# scripts (they want an initramfs generator); depmod instead.
		rm -rf "$root/tmp/kdeb"
		mkdir -p -m 777 "$root/tmp/kdeb"
		in_root sh -c "cd /tmp/kdeb && apt-get download -qq $image $(
			[ "${image#linux-binary-}" != "$image" ] && echo "linux-modules-$kver")"
		for deb in "$root"/tmp/kdeb/*.deb; do
			dpkg-deb -x "$deb" "$root"
		done
		rm -rf "$root/tmp/kdeb"
		# 7.x installs the image as /lib/modules/KVER/vmlinuz (the
		# linux-image package's script would copy it to /boot).
		[ -r "$root/boot/vmlinuz-$kver" ] ||
			cp "$root/lib/modules/$kver/vmlinuz" "$root/boot/vmlinuz-$kver"
		in_root depmod -a "$kver"
	fi
	kver=
done
# The newest kernel source the archive has (trixie-backports): tdc and
# checkpatch of that series (setup.sh extracts them), the tree a netdev
# submission targets. Its series may lag the newest image's.
src=$(in_root apt-cache pkgnames linux-source- |
	sed -En 's/^(linux-source-[0-9]+\.[0-9]+)$/\1/p' | sort -V | tail -n1)
if [ -n "$src" ] && ! [ -r "$root/usr/src/$src.tar.xz" ]; then
	log "installing $src"
	in_root apt-get install -y -qq --no-install-recommends "$src" >/dev/null
fi

# sparse from forky through an apt state of its own (the root's sources and
# package lists stay trixie's): only the package's files, in /opt.
if ! [ -x "$root$sparse" ]; then
	log "sparse from forky into ${sparse%/usr/bin/sparse}"
	# A testing suite's Release expires within days; the signature is
	# still checked (the project's mirror may be a dated copy).
	forky=(-o Dir::Etc::SourceList=/etc/apt/pfb-forky.list
	       -o Dir::Etc::SourceParts=/nonexistent
	       -o Dir::State::Lists=/var/lib/apt/pfb-forky-lists
	       -o Acquire::Check-Valid-Until=false)
	echo "deb $mirror forky main" > "$root/etc/apt/pfb-forky.list"
	mkdir -p "$root/var/lib/apt/pfb-forky-lists/partial"
	in_root apt-get -qq "${forky[@]}" update >/dev/null
	rm -rf "$root/tmp/sparse"
	mkdir -p -m 777 "$root/tmp/sparse"
	in_root sh -c 'cd /tmp/sparse && exec apt-get download -qq "$@" sparse' \
		sh "${forky[@]}"
	rm -rf "$root${sparse%/usr/bin/sparse}"
	dpkg-deb -x "$root"/tmp/sparse/sparse_*.deb "$root${sparse%/usr/bin/sparse}"
	rm -rf "$root/tmp/sparse"
fi
# The kernel source's checker-valid.sh, into every kbuild tree that runs it.
for hdr in $(headers_without_checker); do
	log "scripts/checker-valid.sh from $(basename "$(newest_source)") into $hdr"
	tar -xJf "$(newest_source)" --wildcards --to-stdout '*/scripts/checker-valid.sh' \
		> "$hdr/scripts/checker-valid.sh"
	chmod 755 "$hdr/scripts/checker-valid.sh"
done
in_root apt-get clean
echo "$want" > "$stamp"
log "ready in $((SECONDS - start)) s: $(kernels | tr '\n' ' ')"
