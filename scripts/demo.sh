#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make demo): build for the default kernel and, in the VM,
# show what pfifo_bulk does with a short version of the benchmark. Until the
# benchmark exists: load the modules, add a refnic with pfifo_bulk, send
# traffic with pktgen and print "tc -s".
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=${KVER:-$(ls /boot/vmlinuz-*-amd64 | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}

echo "demo: building for $kver" >&2
make -s modules KVER="$kver" >/dev/null
if [ -x selftests/bulk_bench.sh ]; then
	exec tools/vm/run -k "$kver" -- selftests/bulk_bench.sh --demo
fi
exec tools/vm/run -k "$kver" -- selftests/demo_traffic.sh
