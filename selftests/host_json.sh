#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tc and bulkctl print the same dump the same way, on the host, no pfifo_bulk
# kernel needed: a preloaded shim (pfb_nlshim.c) answers their qdisc dump
# with canned messages (pfb_canned.py tc-json: handle 0 at the root as a
# default_qdisc has it, handle-0 children of a default mq, counters beyond
# 32 bits, rate estimators, coalescing in microseconds and seconds). Proves:
# "bulkctl [-s] [-j] [-p] show [dev lo]" is byte for byte the pfifo_bulk part
# of "tc [-s] [-j] [-p] qdisc show [dev lo]" (handles print "0:", parents
# "8001:1", 64-bit counters whole, estimator "rate" lines and JSON keys,
# no mean_batch in JSON); that a dump ending in an error (an NLMSG_DONE
# carrying one) fails with exit 2 and one line, its JSON array still closed;
# that "show" with nothing to show exits 0 as tc does, "[]" in JSON; that
# -batch runs a command per line until one fails; and that "watch" reports
# the differences between its two samples (pfb_canned.py watch-0, watch-1),
# the 32-bit drops counter's wrap and a qdisc created again included.
#
# As root everything runs as nobody in a fresh network namespace; only the
# dump is canned, device names come from that namespace's kernel.
#
#   selftests/host_json.sh

. "$(dirname "$0")/lib.sh"
require_cmd tc python3 cc

tmp=$(mktemp -d)
defer "rm -rf $tmp"
chmod 755 "$tmp"
out=$( { make -s -C "$PFB_TOP/tc-plugin" && make -s -C "$PFB_TOP/tools/bulkctl"; } 2>&1) ||
	{ echo "not ok: setup: build: $out"; exit 1; }
must cc -shared -fPIC -O2 -Wall -Wextra -o "$tmp/pfb_nlshim.so" "$PFB_TOP/selftests/pfb_nlshim.c" -ldl
must python3 "$PFB_TOP/selftests/pfb_canned.py" "$tmp/dump" 1 tc-json
chmod 644 "$tmp/dump" "$tmp/pfb_nlshim.so"

if [ "$(id -u)" -eq 0 ]; then
	sandbox=(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups
		 --inh-caps=-all)
else
	sandbox=()
fi
canned=(env LD_PRELOAD="$tmp/pfb_nlshim.so" PFB_NLSHIM_FILE="$tmp/dump"
	TC_LIB_DIR="$PFB_TOP/tc-plugin")
B=$PFB_TOP/tools/bulkctl/bulkctl

# pfb_only: tc's output without the mq's own entry (bulkctl shows only
# pfifo_bulk): in text its three lines, in JSON its object.
pfb_only() {
	python3 -c '
import json, re, sys
s = sys.stdin.read()
if s.startswith("["):
    out = json.dumps([q for q in json.loads(s) if q["kind"] == "pfifo_bulk"],
                     separators=(",", ":"))
    print(out)
else:
    print("".join(b for b in re.split(r"(?m)^(?=qdisc )", s)
                  if not b.startswith("qdisc mq ")), end="")'
}
# json_canon: JSON in tc's compact form, keys in their order.
json_canon() {
	python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), separators=(",", ":")))'
}

for opts in "" "-s" "-j" "-s -j" "-s -j -p"; do
	for where in "" "dev lo"; do
		"${sandbox[@]}" "${canned[@]}" tc $opts qdisc show $where > "$tmp/tc" 2> "$tmp/tc.err"
		check_eq "tc $opts qdisc show $where: ran" "$?:$(cat "$tmp/tc.err")" "0:"
		"${sandbox[@]}" "${canned[@]}" "$B" $opts show $where > "$tmp/b" 2> "$tmp/b.err"
		check_eq "bulkctl $opts show $where: ran" "$?:$(cat "$tmp/b.err")" "0:"
		if [[ $opts == *-j* ]]; then
			# tc's pretty printing of the filtered array is not
			# tc's own: compare the values and their order, and
			# the bytes where there is no -p.
			check_eq "bulkctl $opts show $where = tc's pfifo_bulk qdiscs" \
				"$(json_canon < "$tmp/b")" "$(json_canon < "$tmp/tc" | pfb_only)"
			[[ $opts == *-p* ]] || check_eq "bulkctl $opts show $where: tc's bytes" \
				"$(cat "$tmp/b")" "$(pfb_only < "$tmp/tc")"
		else
			check "bulkctl $opts show $where = tc's, byte for byte" \
				diff -u <(pfb_only < "$tmp/tc") "$tmp/b"
		fi
	done
done

# What the comparison covers, in bulkctl's JSON.
"${sandbox[@]}" "${canned[@]}" "$B" -s -j show > "$tmp/b"
check_eq "handles 0:, parents root and 8001:N" \
	"$(jq -c '[.[] | [.handle, .root, .parent]]' "$tmp/b")" \
	'[["0:",true,null],["0:",null,"8001:1"],["0:",null,"8001:2"]]'
check_eq "counters beyond 32 bits" "$(jq -c '[.[] | [.packets, .bytes, .batches, .held_ns_max]]' "$tmp/b")" \
	'[[4294967303,6442450944000,4294967298,4294967313],[8589934599,12884901888000,8589934594,8589934609],[12884901895,19327352832000,12884901890,12884901905]]'
check_eq "estimators: tc's rate keys" "$(jq -c '[.[] | [.rate, .pps]]' "$tmp/b")" \
	'[[21474836480,4000000000],[null,null],[21474836480,4000000000]]'
check_eq "coalesce_usecs in JSON in microseconds" "$(jq -c '[.[].options.coalesce_usecs]' "$tmp/b")" '[0,800,1500000]'
check_eq "no mean_batch in JSON" "$(jq -c '[.[] | has("mean_batch")] | unique' "$tmp/b")" '[false]'
"${sandbox[@]}" "${canned[@]}" "$B" -s show > "$tmp/b"
check_eq "text: times as tc prints them" \
	"$(grep -o 'coalesce_usecs [^ ]*\|held_ns_max [^ ]*' "$tmp/b" | tr '\n' ',')" \
	"held_ns_max 4.29s,coalesce_usecs 800us,held_ns_max 8.59s,coalesce_usecs 1.5s,held_ns_max 12.9s,"

# A dump that fails half way: the kernel's error in NLMSG_DONE.
"${sandbox[@]}" "${canned[@]}" PFB_NLSHIM_DONE=105 "$B" -s -j show > "$tmp/b" 2> "$tmp/b.err"
check_eq "dump ending in an error: exit status" "$?" 2
check_eq "dump ending in an error: the error, one line" "$(cat "$tmp/b.err")" \
	"RTNETLINK answers: No buffer space available"
check_eq "dump ending in an error: the JSON array is closed" \
	"$(jq -c '[.[].handle]' "$tmp/b" 2>&1)" '["0:","0:","0:"]'

# -batch: a command per line, as tc -batch; the first failure ends it.
printf 'show dev lo\n\nshow\n' > "$tmp/batch"
printf 'show dev lo\nshow dev nosuchdev0\nshow dev lo\n' > "$tmp/batch-bad"
chmod 644 "$tmp/batch" "$tmp/batch-bad"
"${sandbox[@]}" "${canned[@]}" "$B" -batch "$tmp/batch" > "$tmp/b" 2> "$tmp/b.err"
check_eq "-batch: exit status, stderr" "$?:$(cat "$tmp/b.err")" "0:"
check "-batch: each command's output" diff -u "$tmp/b" <(
	"${sandbox[@]}" "${canned[@]}" "$B" show dev lo
	"${sandbox[@]}" "${canned[@]}" "$B" show)
"${sandbox[@]}" "${canned[@]}" "$B" -b "$tmp/batch-bad" > "$tmp/b" 2> "$tmp/b.err"
check_eq "-batch: a failing command ends it with its status and message" \
	"$?:$(cat "$tmp/b.err"):$(grep -c '^qdisc' "$tmp/b")" \
	'1:bulkctl: show: cannot find device "nosuchdev0":3'

# ... and with the kernel's message: printed once, as tc prints it.
"${sandbox[@]}" "${canned[@]}" PFB_NLSHIM_DONE=105 PFB_NLSHIM_MSG="Dump interrupted" \
	"$B" -j show > "$tmp/b" 2> "$tmp/b.err"
check_eq "dump ending in an error with a message: exit status, the message" \
	"$?:$(cat "$tmp/b.err")" "2:Error: Dump interrupted."
check_eq "dump ending in an error with a message: the JSON array is closed" \
	"$(jq -c '[.[].handle]' "$tmp/b" 2>&1)" '["0:","0:","0:"]'

# ENOENT and EOPNOTSUPP, which iproute2 prints only with the kernel's
# message (for its other dumps they mean "none"): one line either way.
for e in 2:"No such file or directory" 95:"Operation not supported"; do
	for msg in "" "Dump failed"; do
		"${sandbox[@]}" "${canned[@]}" PFB_NLSHIM_DONE=${e%%:*} ${msg:+PFB_NLSHIM_MSG="$msg"} \
			"$B" show > /dev/null 2> "$tmp/b.err"
		rc=$?
		want="RTNETLINK answers: ${e#*:}"
		[ -z "$msg" ] || want="Error: $msg."
		check_eq "dump ending in errno ${e%%:*}${msg:+ with a message}: exit status, one line" \
			"$rc:$(cat "$tmp/b.err")" "2:$want"
	done
done

# watch: a dump per sample; what each qdisc counted in the interval, the
# rates times the interval measured (11:'s drops wrapped 32 bits: 32, not
# 16; 12: was created again: all its 7 drops, not 7 - 5).
for n in 0 1; do
	must python3 "$PFB_TOP/selftests/pfb_canned.py" "$tmp/watch-$n" 1 watch-$n
	chmod 644 "$tmp/watch-$n"
done
w=$("${sandbox[@]}" env LD_PRELOAD="$tmp/pfb_nlshim.so" PFB_NLSHIM_FILE="$tmp/watch-0:$tmp/watch-1" \
	"$B" -j watch lo interval 0.1 count 1)
check_eq "watch: packets, drops and batches of each qdisc and the total" \
	"$(jq -c '.interval as $t | [(.qdiscs[], .) | [.handle, ((.pkts_per_sec, .drops_per_sec, .batches_per_sec) * $t | round)]]' <<< "$w")" \
	'[["11:",100,32,10],["12:",50,7,10],[null,150,39,20]]'

# Nothing to show: exit 0, as tc.
: > "$tmp/empty"
"${sandbox[@]}" env LD_PRELOAD="$tmp/pfb_nlshim.so" PFB_NLSHIM_FILE="$tmp/empty" \
	"$B" -j show dev lo > "$tmp/b" 2> "$tmp/b.err"
check_eq "nothing to show: exit status, stderr" "$?:$(cat "$tmp/b.err")" "0:"
check_eq "nothing to show: JSON" "$(cat "$tmp/b")" "[]"

pfb_exit
