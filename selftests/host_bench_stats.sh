#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side unit tests of the benchmark's statistics and run schedule on
# canned numbers (pfb_bench_test.py): Student's t, the interval of a ratio
# of means worked by hand, the runs a ±margin interval needs (and that
# ratio_ci() then meets it), "not resolved (±X %)" instead of a number in
# the report and the headline, and the cost regime's rounds (alternation,
# resolved after the pilot, more rounds, --max-runs, --budget) on a fake
# measurement. No root, no VM.
#
#   selftests/host_bench_stats.sh

. "$(dirname "$0")/lib.sh"

out=$(python3 "$PFB_TOP/selftests/pfb_bench_test.py" -v 2>&1)
rc=$?
echo "$out" | sed -n 's/^\(test_[a-z_]*\) (__main__\.\([A-Za-z]*\)\.[a-z_]*) \.\.\. /# \2.\1: /p'
check_eq "pfb_bench_test.py: every unit test passes" "$rc" 0
check_cmp "pfb_bench_test.py ran its tests" \
	"$(echo "$out" | sed -n 's/^Ran \([0-9]*\) tests.*/\1/p')" '>=' 18
[ "$rc" -eq 0 ] || echo "$out" | sed 's/^/# /'

pfb_exit
