#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark (see bulk_bench.py --help): pfifo_bulk (bulk off, default,
# locked with lockless=0, byte-capped) against pfifo, pfifo_fast, fq_codel and fq and against pfifo_bulk
# of an earlier revision (pfb_locked, "make rev-modules"), on refnic (device-
# and CPU-bound, a doorbell that costs) and on the VM's NIC (-d auto), under
# pktgen (flat out, and paced for what coalescing buys: coalesce,
# coalesce50), UDP and TCP streams and request/response; configurations
# alternated, mean ± stddev, ratios with 95 % intervals, perf diff, table +
# JSON + plot. Not a pass/fail test: it exits 0 when the run completed,
# whatever the figures, and 1 when kernel text was patched under a parallel
# run's measurements (its figures are then not trusted).
#
#   bulk_bench.sh [--demo] [--regime interleaved|parallel] [-n REPS] [-t SECS]
#                 [-s SCENARIOS] [-l LOADS] [-c CONFIGS] [-d auto|DEV] [...]
#   bulk_bench.sh --cost [--count PKTS] [--pilot N] [--margin PCT] [--max-runs N] [...]
#
# The cost regime (fixed packet counts, runs until every pps ratio is known
# to ±2 % or the cap) under QEMU's instruction counter:
#   PFB_VM_ICOUNT=1 tools/vm/run ... -- bulk_bench.sh --cost ...
#
# Parallel regime (multi-threaded TCG) only as
#   PFB_VM_TCG_THREAD=multi tools/vm/run -c 4 ... -- bulk_bench.sh --regime parallel ...
# it then sets no kprobe and enables no tracepoint.

here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 4; }
[ -x "$here/pfb_load" ] || make -s -C "$here" pfb_load >/dev/null ||
	{ echo "SKIP: cannot build pfb_load"; exit 4; }
exec python3 "$here/bulk_bench.py" "$@"
