#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The headers of Debian 12's 32-bit x86 kernel (linux-headers-ABI-686 and
# the linux-headers-ABI-common they include), so that make check builds
# both modules for i386 too: the 64-bit counters (u64_stats, ktime
# arithmetic, 64-bit divisions) are only proven right where a u64 takes
# two words.
#
# The packages are fetched with the host's own apt sources and keys into a
# private package list (nothing of the host's dpkg state changes) and
# unpacked under the cache. The ABI is the host's 6.1 ABI when the archive
# serves its 686 headers, else the newest 6.1 ABI it serves for i386: a
# mirror can serve one suite's i386 index unusable (bookworm-security's,
# with a size that its signed Release does not give) while the others
# load, and apt then ignores that suite. Their scripts/ and tools/ are the
# host's linux-kbuild-6.1 (the same build tools, run on the host), which
# must be at least the headers' version, as their package requires.
#
#   scripts/i386-headers.sh            fetch and extract, once
#   scripts/i386-headers.sh --print    the kernel build directory (KDIR)
set -euo pipefail

cache=${PFB_SRCDIR:-/var/cache/pfifo-bulk}/i386-headers
root=$cache/root

if [ "${1:-}" = "--print" ]; then
	kdir=$(cat "$cache/kdir" 2>/dev/null) ||
		{ echo "i386-headers: not fetched (make setup)" >&2; exit 1; }
	echo "$kdir"
	exit 0
fi
[ -f "$cache/kdir" ] && [ -f "$(cat "$cache/kdir")/.extracted" ] && exit 0

host_abi=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null |
	sed 's|.*/linux-headers-\(.*\)-amd64$|\1|' | sort -V | tail -n1)
[ -n "$host_abi" ] || { echo "i386-headers: no linux-headers-6.1.*-amd64 (make setup)" >&2; exit 1; }
apt_i386=(-o APT::Architecture=i386 -o APT::Architectures::=i386
	  -o Dir::State::Lists="$cache/lists" -o Dir::Cache="$cache/apt"
	  -o Dir::State::status=/dev/null -o Debug::NoLocking=1
	  -o APT::Sandbox::User=root)
rm -rf "$cache"
mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/deb"
# A suite whose index fails is left out (apt says which); what the others
# serve is still signed and checked.
apt-get "${apt_i386[@]}" update -qq >/dev/null ||
	echo "i386-headers: an i386 index did not load (above); using the suites that did" >&2

# candidate PACKAGE: the version the loaded indexes serve, or nothing
candidate() {
	apt-cache "${apt_i386[@]}" policy "$1" 2>/dev/null |
		sed -n 's/^ *Candidate: //p' | grep -v '(none)' || true
}

abi=$host_abi
ver=$(candidate "linux-headers-$abi-686")
if [ -z "$ver" ]; then
	abi=$(apt-cache "${apt_i386[@]}" pkgnames linux-headers-6.1. |
		sed -n 's/^linux-headers-\(6\.1\..*\)-686$/\1/p' | sort -V | tail -n1)
	[ -n "$abi" ] || { echo "i386-headers: the archive serves no linux-headers-6.1.*-686" >&2; exit 1; }
	ver=$(candidate "linux-headers-$abi-686")
	echo "i386-headers: linux-headers-$host_abi-686 is not served; taking $abi" >&2
fi
kbuild=$(dpkg-query -W -f='${Version}' linux-kbuild-6.1)
dpkg --compare-versions "$kbuild" ge "$ver" ||
	{ echo "i386-headers: linux-kbuild-6.1 $kbuild is older than the headers' $ver" >&2; exit 1; }

echo "i386-headers: fetching linux-headers-$abi-686 and -common $ver" >&2
(cd "$cache/deb" && apt-get "${apt_i386[@]}" download -qq \
	"linux-headers-$abi-686=$ver" "linux-headers-$abi-common=$ver") ||
	{ echo "i386-headers: linux-headers-$abi-686 $ver is not in the archive" >&2; exit 1; }
for deb in "$cache"/deb/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
kdir=$root/usr/src/linux-headers-$abi-686
# the flavour's Makefile includes the common tree by its installed path
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
mkdir -p "$root/usr/lib"
ln -sfn /usr/lib/linux-kbuild-6.1 "$root/usr/lib/linux-kbuild-6.1"
[ -d "$kdir/scripts/" ] && grep -q "^include $root/" "$kdir/Makefile" ||
	{ echo "i386-headers: $kdir is incomplete" >&2; exit 1; }
rm -rf "$cache/lists" "$cache/apt" "$cache/deb"
touch "$kdir/.extracted"
echo "$kdir" > "$cache/kdir"
