#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lock-savings benchmark (see bulk_bench.py --help): pfifo_bulk bulk off,
# default and byte-capped against pfifo, pfifo_fast and fq_codel and against
# pfifo_bulk of an earlier revision (pfb_locked, "make rev-modules"),
# alternated, mean ± stddev, perf diff, table + JSON + plot. Not a pass/fail
# test: it exits 0 when the run completed, whatever the figures.
#
#   bulk_bench.sh [--demo] [-n REPS] [-t SECS] [-d REALDEV] [--locked-ko KO] [...]

here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 4; }
[ -x "$here/pfb_load" ] || make -s -C "$here" pfb_load >/dev/null ||
	{ echo "SKIP: cannot build pfb_load"; exit 4; }
exec python3 "$here/bulk_bench.py" "$@"
