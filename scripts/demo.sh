#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make demo): build for the default kernel and, in the VM,
# show what pfifo_bulk does with a short version of the benchmark:
# pfifo_bulk against pfifo, pfifo_fast, fq_codel and fq under pktgen 64 B,
# on refnic CPU-bound (unlimited line, a doorbell that costs) and on a real
# driver (e1000e, through a backend that reaches no network), in both
# regimes:
#  - interleaved vCPUs (single-threaded TCG): spin-lock counts (kprobes),
#    batches (tracepoint and xstats), pps, CPU, perf diff;
#  - parallel vCPUs (multi-threaded TCG, 4 vCPUs): pps, CPU and batches
#    from the qdisc's xstats and refnic's ethtool -S (no kprobes there).
# It ends with the headline table and the plot it wrote.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=${KVER:-$(ls /boot/vmlinuz-*-amd64 | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
nic=${PFB_DEMO_NIC:-e1000e}
out=${PFB_DEMO_OUT:-$top/.vm/demo-$kver-$(date +%Y%m%d-%H%M%S)}
start=$(date +%s)
# A kernel of the Debian 13 root (scripts/trixie-root.sh) has its modules
# built in that root, with trixie's gcc 14, and its guests run with that
# root as their userspace (trixie's tc; it has no perf, so the benchmark
# leaves out its perf diff there), as make check does.
trixie=${PFB_TRIXIE_ROOT:-/var/cache/pfifo-bulk/trixie-root}
in_root=()
if ! [ -r "/boot/vmlinuz-$kver" ] && [ -r "$trixie/boot/vmlinuz-$kver" ]; then
	in_root=(scripts/trixie-root.sh --chroot)
	export PFB_VM_USERSPACE=$trixie
fi

echo "demo: host load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "demo: building for $kver" >&2
"${in_root[@]}" make -s modules KVER="$kver" >/dev/null
make -s plugin bulkctl >/dev/null
make -s -C selftests >/dev/null
mkdir -p "$out"

echo "demo: interleaved vCPUs: tools/vm/run -k $kver -n $nic -- selftests/bulk_bench.sh --demo -d auto" >&2
tools/vm/run -k "$kver" -n "$nic" -- \
	selftests/bulk_bench.sh --demo -d auto -o "$out/interleaved"

echo "demo: parallel vCPUs: PFB_VM_TCG_THREAD=multi tools/vm/run -k $kver -c 4 -n $nic -- selftests/bulk_bench.sh --demo --regime parallel -d auto" >&2
PFB_VM_TCG_THREAD=multi tools/vm/run -k "$kver" -c 4 -n "$nic" -- \
	selftests/bulk_bench.sh --demo --regime parallel -d auto --no-perf -o "$out/parallel"

echo
echo "demo: $(( $(date +%s) - start )) s; host load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "demo: full tables: $out/interleaved/table.txt, $out/parallel/table.txt"
python3 selftests/bulk_bench.py --headline "$out/interleaved" "$out/parallel" -o "$out"
