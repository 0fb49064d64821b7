#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side check of what the README and the man pages promise a reader:
# README.rst at most 300 lines, and neither it nor a man page carries
# history (a commit id, "predates"): those belong in git log and in
# Documentation/. The checker proves itself on a copy with a commit id.
#
#   selftests/host_docs.sh

. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
defer "rm -rf $tmp"

# history FILE...: the lines of FILE that look like history: a word of 7
# to 40 hex digits with a letter and a digit in it (a commit id, not a
# number such as 16777216), or "predate".
history() {
	grep -nHiE '\bpredat' "$@"
	grep -nHoE '\b[0-9a-f]{7,40}\b' "$@" | grep -E ':[0-9a-f]*[a-f][0-9a-f]*$' |
		grep -E ':[0-9a-f]*[0-9][0-9a-f]*$'
}

readme=$PFB_TOP/README.rst
check_cmp "README.rst has at most 300 lines" "$(wc -l < "$readme")" '<=' 300
check_eq "no history in README.rst or the man pages" \
	"$(history "$readme" "$PFB_TOP"/tc-plugin/*.8 "$PFB_TOP"/tools/bulkctl/*.8)" ""

sed '0,/^What it buys/ s/^What it buys/What it buys since 1fd2c98/' "$readme" > "$tmp/README.rst"
check_eq "the checker finds a commit id" "$(history "$tmp/README.rst" | wc -l)" 1

pfb_exit
