#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side lint of the selftests: a fixed sleep directly followed by a
# check ("sleep 0.5", then "check_cmp ... > 0") is a bound by time that a
# loaded host can miss, unless a comment says why it holds (issue 34: every
# bound a test asserts says why a loaded host still meets it). Flags such
# a sleep or nap with no comment on the three lines above it. Wait for a
# condition instead where something must happen; where the check is that
# nothing happens, say so. The lint proves itself on a canned test.
#
#   selftests/host_bounds.sh

. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
defer "rm -rf $tmp"

# bare_sleeps FILE...: "FILE:LINE: sleep" for each uncommented sleep-then-check
bare_sleeps() {
	awk '
	FNR == 1 { c1 = c2 = c3 = 0; pend = 0 }
	pend && /^[ \t]*(check|check_[a-z]+|xfail_on_slow)[ \t]/ { print FILENAME ":" sl ": " st; pend = 0 }
	pend && !/^[ \t]*$/ { pend = 0 }
	/^[ \t]*(sleep|nap) [0-9.]+[ \t]*$/ && !(c1 || c2 || c3) { pend = 1; sl = FNR; st = $1 }
	{ c3 = c2; c2 = c1; c1 = /^[ \t]*#/ }' "$@"
}

# the guest tests and their libraries (the host tests' canned inputs hold
# such lines on purpose, this one's included)
check_eq "no uncommented sleep before a check in the selftests" \
	"$(bare_sleeps $(ls "$PFB_TESTDIR"/*.sh | grep -v '/host_[^/]*$'))" ""

cat > "$tmp/canned.sh" <<'CANNED'
pktgen_run &
sleep 0.5
check_cmp "a backlog exists" "$(qlen)" ">" 0
# (a comment says why a loaded host meets it)
sleep 1

check "the device went still" still
nap 2
do_something
check "not right after the sleep" true
CANNED
check_eq "the lint flags the canned bare sleep, and only it" \
	"$(bare_sleeps "$tmp/canned.sh" | sed 's|.*/||')" "canned.sh:2: sleep"
pfb_exit
