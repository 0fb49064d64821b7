#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-check.sh KVER     prove that "dkms build" builds both modules for KVER,
#                        then unregister again (used by make check)
# dkms-check.sh --install  register the tree and "dkms install" it for every
#                        kernel whose headers are installed
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$top/dkms.conf")
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
src=/usr/src/$name-$ver

# DKMS keeps one source tree and one build per name and version for the
# whole system (here: the host, or the trixie root): two checkouts' runs
# side by side removed each other's ("Directory: /usr/src/pfifo-bulk-0.1.0
# does not exist"). One at a time; the lock goes with the process.
exec 9> "/run/lock/$name-dkms.lock"
flock 9

# DKMS builds from /usr/src/NAME-VERSION: copy the kernel parts there.
register() {
	dkms remove -m "$name" -v "$ver" --all >/dev/null 2>&1 || true
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$top" && cp -r --parents dkms.conf Kbuild include/uapi \
		net/sched/Kbuild net/sched/*.[ch] drivers/net/refnic/Kbuild \
		drivers/net/refnic/*.[ch] "$src/")
	dkms add -m "$name" -v "$ver" >/dev/null
}

if [ "${1:-}" = "--install" ]; then
	register
	for h in /usr/src/linux-headers-*-amd64; do
		k=${h#/usr/src/linux-headers-}
		dkms install -m "$name" -v "$ver" -k "$k"
	done
	exit 0
fi

kver=$1
register
trap 'dkms remove -m "$name" -v "$ver" --all >/dev/null 2>&1; rm -rf "$src"' EXIT
dkms build -m "$name" -v "$ver" -k "$kver"
for m in sch_pfifo_bulk refnic; do
	ls /var/lib/dkms/"$name"/"$ver"/"$kver"/*/module/"$m".ko* >/dev/null ||
		{ echo "dkms: $m.ko not built for $kver" >&2; exit 1; }
done
echo "dkms: both modules built for $kver"
