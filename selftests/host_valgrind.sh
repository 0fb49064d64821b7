#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side checks of the userspace tools; no pfifo_bulk kernel needed.
# Proves that the tc plugin's parse paths (help, every bad value, unknown
# words, missing and repeated values) give tc's exit codes and messages and
# are valgrind-clean; that its print paths, fed canned kernel dumps through
# "tc -s monitor file" (selftests/pfb_canned.py: all options, all xstats, a
# histogram, attributes from a "newer kernel" and truncated ones), print the
# right values and are valgrind-clean; and the same for bulkctl (parse
# errors, "show --file" text and JSON, which must agree with tc's text and
# with the canned values).
#
# Nothing here may reach the host kernel: when run as root every command runs
# as nobody in a fresh network namespace, so even a request that slipped
# through parsing would get EPERM before the kernel looked at it.
#
#   selftests/host_valgrind.sh		(from the checkout; builds what it needs)

. "$(dirname "$0")/lib.sh"
require_cmd valgrind jq python3 tc

# Both build without a single warning (-Wall -Wextra), and the plugin exports
# nothing but the symbol tc looks up.
warnings=$( { make -B -s -C "$PFB_TOP/tc-plugin" && make -B -s -C "$PFB_TOP/tools/bulkctl"; } 2>&1 >/dev/null)
[ -f "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" ] && [ -x "$PFB_TOP/tools/bulkctl/bulkctl" ] ||
	{ echo "build failed: $warnings"; exit 1; }
check_eq "builds are warning-free" "$warnings" ""
check_eq "plugin exports one symbol" \
	"$(nm -D --defined-only "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" | awk '{ print $3 }')" \
	pfifo_bulk_qdisc_util

tmp=$(mktemp -d)
defer "rm -rf $tmp"
chmod 755 "$tmp"

if [ "$(id -u)" -eq 0 ]; then
	sandbox=(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups
		 --inh-caps=-all)
else
	sandbox=()
fi
vg=(valgrind -q --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect)
TC=(env TC_LIB_DIR="$PFB_TOP/tc-plugin" "${vg[@]}" tc)
BULKCTL=("${vg[@]}" "$PFB_TOP/tools/bulkctl/bulkctl")

# run OUT CMD...: CMD's stdout in $tmp/OUT, stderr in $tmp/OUT.err, exit
# status in $rc.
run() {
	local out=$1
	shift
	"${sandbox[@]}" "$@" > "$tmp/$out" 2> "$tmp/$out.err"
	rc=$?
}

# expect DESC RC PATTERN CMD...: exit status RC (valgrind's 99 is never
# expected) and PATTERN (grep -E) in stderr.
expect() {
	local what=$1 want=$2 pat=$3
	shift 3
	run out "$@"
	check_eq "$what: exit status" "$rc" "$want"
	check "$what: message" grep -qE -- "$pat" "$tmp/out.err"
}

# --- tc plugin: parse paths ------------------------------------------------
add=("${TC[@]}" qdisc add dev lo root pfifo_bulk)
expect "tc help" 1 '^Usage: \.\.\. pfifo_bulk \[ limit PACKETS \]' "${add[@]}" help
check "tc help names every range" grep -q '1\.\.16777216 packets' "$tmp/out.err"
expect "tc limit 0" 1 'pfifo_bulk: Illegal value for "limit": "0" \(1\.\.16777216 packets\)' \
	"${add[@]}" limit 0
expect "tc limit 16777217" 1 'Illegal value for "limit": "16777217"' "${add[@]}" limit 16777217
expect "tc limit -1" 1 'Illegal value for "limit": "-1"' "${add[@]}" limit -1
expect "tc limit 1k (counts are plain numbers)" 1 'Illegal value for "limit": "1k"' \
	"${add[@]}" limit 1k
expect "tc limit abc" 1 'Illegal value for "limit": "abc"' "${add[@]}" limit abc
expect "tc bulk_bytes 16777217" 1 'Illegal value for "bulk_bytes": "16777217" \(0\.\.16777216 bytes\)' \
	"${add[@]}" bulk_bytes 16777217
expect "tc bulk_bytes 17m" 1 'Illegal value for "bulk_bytes": "17m"' "${add[@]}" bulk_bytes 17m
expect "tc bulk_bytes 12parsecs" 1 'Illegal value for "bulk_bytes": "12parsecs"' \
	"${add[@]}" bulk_bytes 12parsecs
expect "tc bulk_pkts 65537" 1 'Illegal value for "bulk_pkts": "65537" \(0\.\.65536 packets\)' \
	"${add[@]}" bulk_pkts 65537
expect "tc mode turbo" 1 'Illegal value for "mode": "turbo" \(auto, bql or nobql\)' \
	"${add[@]}" mode turbo
expect "tc unknown word" 1 'pfifo_bulk: unknown parameter "burst"' "${add[@]}" burst 3
check "tc unknown word prints usage" grep -q '^Usage:' "$tmp/out.err"
expect "tc missing value" 255 'Command line is not complete' "${add[@]}" limit
expect "tc duplicate option" 255 'duplicate "bulk_pkts": "2" is the second value' \
	"${add[@]}" bulk_pkts 1 bulk_pkts 2
expect "tc bad value after good ones" 1 'Illegal value for "mode": "BQL"' \
	"${add[@]}" limit 10 bulk_bytes 64k bulk_pkts 8 mode BQL
# "change" and "replace" use the same parser.
expect "tc change bad value" 1 'Illegal value for "limit": "0"' \
	"${TC[@]}" qdisc change dev lo root pfifo_bulk limit 0
expect "tc replace bad value" 1 'Illegal value for "bulk_pkts": "x"' \
	"${TC[@]}" qdisc replace dev lo root pfifo_bulk bulk_pkts x

# --- tc plugin: print paths, from canned dumps --------------------------------
python3 "$PFB_TOP/selftests/pfb_canned.py" "$tmp/canned" 1
chmod 644 "$tmp/canned"
run tc.txt "${TC[@]}" -s monitor file "$tmp/canned"
check_eq "tc -s monitor file: exit status (valgrind clean)" "$rc" 0
check_eq "tc: no errors" "$(cat "$tmp/tc.txt.err")" ""
# Trailing blanks and blank lines are tc's own; compare without them.
sed -e 's/ *$//' -e '/^$/d' "$tmp/tc.txt" > "$tmp/tc.norm"
cat > "$tmp/want" <<'EOF'
qdisc pfifo_bulk 1: dev lo root refcnt 2 limit 1000p bulk_bytes 64Kb bulk_pkts 16 mode auto effective_mode nobql lockless
 Sent 123456789 bytes 98765 pkt (dropped 7, overlimits 0 requeues 3)
 backlog 1500b 1p requeues 3
  batches 40000 batch_pkts 98765 batch_bytes 123456789 mean_batch 2.47
  batch_hist 1:10000 2:9000 3-4:8000 5-8:7000 9-16:4000 17-32:1500 33-64:400 65+:100
  end_bytes 11 end_pkts 22 end_budget 33 end_empty 39934
  reschedules 5
qdisc pfifo_bulk 2: dev lo parent 1:1 refcnt 2 bulk_pkts 4
EOF
check "tc prints every option and xstat, skips unknown and short ones" \
	diff -u "$tmp/want" "$tmp/tc.norm"

# --- bulkctl: parse paths ---------------------------------------------------------
expect "bulkctl no arguments" 1 '^Usage: bulkctl' "${BULKCTL[@]}"
run out "${BULKCTL[@]}" --help
check_eq "bulkctl --help: exit status" "$rc" 0
check "bulkctl --help on stdout" grep -q '^Usage: bulkctl add|change|replace DEV' "$tmp/out"
run out "${BULKCTL[@]}" --version
check_eq "bulkctl --version: exit status" "$rc" 0
check "bulkctl --version" grep -qE '^bulkctl [0-9]' "$tmp/out"
expect "bulkctl unknown command" 1 '^bulkctl: unknown command "frob"$' "${BULKCTL[@]}" frob
expect "bulkctl add without DEV" 1 '^bulkctl: add: missing DEV$' "${BULKCTL[@]}" add
expect "bulkctl limit 0" 1 '^bulkctl: add: invalid "limit": "0" \(1\.\.16777216 packets\)$' \
	"${BULKCTL[@]}" add lo limit 0
check "bulkctl bad argument: usage follows the message" \
	eval 'sed -n 2p "$tmp/out.err" | grep -q "^Usage: bulkctl"'
expect "bulkctl bulk_bytes 17m" 1 'invalid "bulk_bytes": "17m" \(0\.\.16777216 bytes\)' \
	"${BULKCTL[@]}" replace lo bulk_bytes 17m
expect "bulkctl bulk_pkts 65537" 1 'invalid "bulk_pkts": "65537" \(0\.\.65536 packets\)' \
	"${BULKCTL[@]}" change lo bulk_pkts 65537
expect "bulkctl mode turbo" 1 'invalid "mode": "turbo" \(auto, bql or nobql\)' \
	"${BULKCTL[@]}" add lo mode turbo
expect "bulkctl missing value" 1 'missing value for "limit"' "${BULKCTL[@]}" add lo limit
expect "bulkctl duplicate" 1 'duplicate "bulk_pkts"' "${BULKCTL[@]}" add lo bulk_pkts 1 bulk_pkts 2
expect "bulkctl unknown word" 1 'unknown argument "burst"' "${BULKCTL[@]}" add lo burst 3
expect "bulkctl del takes no options" 1 '^bulkctl: del: unknown argument "limit"$' \
	"${BULKCTL[@]}" del lo limit 5
expect "bulkctl bad parent" 1 'invalid "parent": "12345:1"' "${BULKCTL[@]}" add lo parent 12345:1
expect "bulkctl bad handle" 1 'invalid "handle": "1:1"' "${BULKCTL[@]}" add lo handle 1:1
expect "bulkctl no such device" 1 '^bulkctl: add: cannot find device "nosuchdev0"$' \
	"${BULKCTL[@]}" add nosuchdev0 limit 5
expect "bulkctl watch -i 0" 1 'invalid "-i": "0"' "${BULKCTL[@]}" watch lo -i 0
expect "bulkctl watch -n 0" 1 'invalid "-n": "0"' "${BULKCTL[@]}" watch lo -n 0
expect "bulkctl show unknown flag" 1 'unknown argument "-x"' "${BULKCTL[@]}" show -x
if [ ${#sandbox[@]} -gt 0 ]; then
	expect "bulkctl add without CAP_NET_ADMIN" 2 \
		'^bulkctl: add: Operation not permitted \(changing a qdisc needs CAP_NET_ADMIN\)$' \
		"${BULKCTL[@]}" add lo limit 5
	expect "bulkctl watch without a pfifo_bulk" 2 'no pfifo_bulk qdisc on lo' \
		"${BULKCTL[@]}" watch lo -n 1
fi

# --- bulkctl: print paths, from the same canned dumps ----------------------------
run b.txt "${BULKCTL[@]}" show -s --file "$tmp/canned"
check_eq "bulkctl show -s --file: exit status (valgrind clean)" "$rc" 0
check "bulkctl text = tc text" diff -u "$tmp/tc.norm" "$tmp/b.txt"
run b.json "${BULKCTL[@]}" show -s -j --file "$tmp/canned"
check_eq "bulkctl show -s -j --file: exit status (valgrind clean)" "$rc" 0
check "bulkctl JSON parses" eval 'jq -e "length == 2" "$tmp/b.json" >/dev/null'
want=$(python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import pfb_canned, json
v = pfb_canned.VALUES
o = {k: v[k] for k in ("limit", "bulk_bytes", "bulk_pkts")}
o["mode"], o["effective_mode"], o["lockless"] = "auto", "nobql", True
s = {k: v[k] for k in ("bytes", "packets", "drops", "overlimits", "requeues",
     "backlog", "qlen", "batches", "batch_pkts", "batch_bytes", "end_bytes",
     "end_pkts", "end_budget", "end_empty", "reschedules")}
s["batch_hist"] = dict(zip(["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"], v["hist"]))
s["options"] = o
print(json.dumps(s, sort_keys=True))' "$PFB_TOP/selftests")
got=$(jq -cS '.[0] | del(.kind, .handle, .dev, .root, .refcnt, .mean_batch)' "$tmp/b.json")
check_eq "bulkctl JSON values = canned values" "$got" "$(echo "$want" | jq -cS .)"
check_eq "bulkctl JSON mean_batch" "$(jq '.[0].mean_batch' "$tmp/b.json")" 2.46913
check_eq "bulkctl JSON place" "$(jq -c '[.[] | [.handle, .dev, .root, .parent, .refcnt]]' "$tmp/b.json")" \
	'[["1:","lo",true,null,2],["2:","lo",null,"1:1",2]]'
check_eq "bulkctl JSON skips short and unknown attributes" \
	"$(jq -c '.[1] | [.options, .batches]' "$tmp/b.json")" '[{"bulk_pkts":4},null]'
run b.json "${BULKCTL[@]}" show -j --file "$tmp/canned"
check_eq "bulkctl JSON without -s has no stats" "$(jq -c '[.[] | has("batches", "bytes")] | unique' "$tmp/b.json")" '[false]'

pfb_exit
