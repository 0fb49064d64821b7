#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The headers of Debian 12's 32-bit x86 kernel (linux-headers-ABI-686) for
# the host's newest 6.1 ABI, so that make check builds both modules for
# i386 too: the 64-bit counters (u64_stats, ktime arithmetic, 64-bit
# divisions) are only proven right where a u64 takes two words.
#
# The package is fetched with the host's own apt sources and keys into a
# private i386 package list (nothing of the host's dpkg state changes), of
# exactly the version of the host's linux-headers-ABI-amd64: its Makefile
# includes the host's linux-headers-ABI-common, and its scripts/ and tools/
# are the host's linux-kbuild-6.1 (the same build tools, run on the host).
#
#   scripts/i386-headers.sh            fetch and extract, once
#   scripts/i386-headers.sh --print    the kernel build directory (KDIR)
set -euo pipefail

cache=${PFB_SRCDIR:-/var/cache/pfifo-bulk}/i386-headers
abi=$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null |
	sed 's|.*/linux-headers-\(.*\)-amd64$|\1|' | sort -V | tail -n1)
[ -n "$abi" ] || { echo "i386-headers: no linux-headers-6.1.*-amd64 (make setup)" >&2; exit 1; }
kdir=$cache/root/usr/src/linux-headers-$abi-686

if [ "${1:-}" = "--print" ]; then
	echo "$kdir"
	exit 0
fi
[ -f "$kdir/.extracted" ] && exit 0

ver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi-amd64")
apt_i386=(-o APT::Architecture=i386 -o APT::Architectures::=i386
	  -o Dir::State::Lists="$cache/lists" -o Dir::Cache="$cache/apt"
	  -o Dir::State::status=/dev/null -o Debug::NoLocking=1
	  -o APT::Sandbox::User=root)
echo "i386-headers: fetching linux-headers-$abi-686 $ver" >&2
rm -rf "$cache"
mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/deb"
apt-get "${apt_i386[@]}" update -qq >/dev/null
(cd "$cache/deb" && apt-get "${apt_i386[@]}" download -qq "linux-headers-$abi-686=$ver") ||
	{ echo "i386-headers: linux-headers-$abi-686 $ver is not in the archive" >&2; exit 1; }
dpkg-deb -x "$cache"/deb/*.deb "$cache/root"
mkdir -p "$cache/root/usr/lib"
ln -sfn "/usr/lib/linux-kbuild-${abi%%.0-*}" "$cache/root/usr/lib/linux-kbuild-${abi%%.0-*}"
[ -f "$kdir/Makefile" ] && [ -d "$kdir/scripts/" ] ||
	{ echo "i386-headers: $kdir is incomplete" >&2; exit 1; }
rm -rf "$cache/lists" "$cache/apt" "$cache/deb"
touch "$kdir/.extracted"
