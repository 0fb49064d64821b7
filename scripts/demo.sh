#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job (make demo): build for the default kernel and, in the VM,
# show what pfifo_bulk does with a short version of the benchmark: pktgen
# 64 B on refnic with BQL on and off, every configuration alternated, the
# table printed with a progress line per configuration.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kver=${KVER:-$(ls /boot/vmlinuz-*-amd64 | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}

echo "demo: building for $kver" >&2
make -s modules KVER="$kver" >/dev/null
make -s plugin bulkctl >/dev/null
make -s -C selftests >/dev/null
exec tools/vm/run -k "$kver" -- selftests/bulk_bench.sh --demo
