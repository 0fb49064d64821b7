#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side lint of TEST_PROGS_MODE_FREE (selftests/Makefile): the tests
# that make check runs in only one of the newest kernel's two passes (the
# second with sch_pfifo_bulk in its other mode), because they run the same
# in both. Such a test either never names pfifo_bulk (refnic's own) or
# loads the mode it is about itself (load_qdisc_lockless, insmod ...
# lockless=N, PFB_LOCKLESS=... load_module);
# a plain "load_module sch_pfifo_bulk" takes PFB_LOCKLESS's mode, and a
# "tc qdisc add ... pfifo_bulk" with nothing loaded first gets the module's
# default, so either makes the test one that both passes must run. The lint
# proves itself on canned tests.
#
#   selftests/host_mode_free.sh

. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
defer "rm -rf $tmp"

# mode_bound FILE...: "FILE" for each FILE that runs pfifo_bulk in a mode
# PFB_LOCKLESS or the module's default picks
mode_bound() {
	local f code
	for f in "$@"; do
		code=$(grep -v '^[[:space:]]*#' "$f")
		grep -q pfifo_bulk <<< "$code" || continue
		if grep -qE '(^|[;&|])[[:space:]]*load_module sch_pfifo_bulk' <<< "$code" ||
		   ! grep -qE 'load_qdisc_lockless [01]|insmod .* lockless=|PFB_LOCKLESS=[^ ]* load_module sch_pfifo_bulk' <<< "$code"; then
			echo "$f"
		fi
	done
}

free=$(make -s -C "$PFB_TESTDIR" --no-print-directory list_tests_mode_free)
check "the Makefile lists mode-free tests" test -n "$free"
check_eq "every mode-free test runs the same in both modes" \
	"$(cd "$PFB_TESTDIR" && mode_bound $free)" ""

cat > "$tmp/refnic_only.sh" <<'CANNED'
load_module refnic
# (a comment may name pfifo_bulk)
CANNED
cat > "$tmp/own_mode.sh" <<'CANNED'
load_qdisc_lockless 1
tc qdisc add dev x root pfifo_bulk
CANNED
cat > "$tmp/inherits.sh" <<'CANNED'
load_module sch_pfifo_bulk
tc qdisc add dev x root pfifo_bulk
CANNED
cat > "$tmp/autoloads.sh" <<'CANNED'
load_module refnic
tc qdisc add dev x root pfifo_bulk
CANNED
check_eq "the lint flags the canned tests that take a mode given to them" \
	"$(cd "$tmp" && mode_bound refnic_only.sh own_mode.sh inherits.sh autoloads.sh | tr '\n' ' ')" \
	"inherits.sh autoloads.sh "
pfb_exit
