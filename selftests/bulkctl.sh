#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bulkctl against the kernel qdisc. Proves: add, change, replace and del
# send the right netlink flags (add refuses an existing qdisc, change needs
# one, replace creates or changes, del only removes a pfifo_bulk), with root,
# parent and handle, and only the options given change; show lists only
# pfifo_bulk qdiscs, all of them or one device's, and agrees with tc in
# text, -j and -s -j; watch prints non-zero packet and batch rates for two
# intervals under load, stops on -n and on Ctrl-C, and fails when the qdisc
# goes away; bad arguments exit 1 with a one-line message and usage and
# change nothing; kernel rejections exit 2 with the kernel's message; EPERM
# is explained; show, add and del are valgrind-clean. (The argv fuzz runs on
# the host: selftests/host_bulkctl_fuzz.sh.)

. "$(dirname "$0")/lib.sh"
require_root
require_cmd tc jq python3
. "$(dirname "$0")/lib_userspace.sh"
load_module sch_pfifo_bulk

B=$BULKCTL
dev=pfbbc0
dev2=pfbbc1
mq=pfbbc2
dummy_add $dev || exit 1
dummy_add $dev2 || exit 1
dummy_add $mq numtxqueues 4 || exit 1

opts() {
	root_opts tc -j qdisc show dev "$1"
}
kind() {
	tc -j qdisc show dev "$1" | jq -r '[.[] | select(.root == true)][0].kind'
}

# --- add, change, replace, del ---------------------------------------------------
check "add" "$B" add $dev handle 1: limit 100 bulk_bytes 64k bulk_pkts 8 mode nobql
check_eq "add: what tc sees" "$(opts $dev)" \
	'{"bulk_bytes":65536,"bulk_pkts":8,"effective_mode":"nobql","limit":100,"lockless":true,"mode":"nobql"}'
check_eq "add: handle" "$(tc -j qdisc show dev $dev | jq -r '.[0].handle')" 1:
check_eq "show -j options = tc -j options" "$(root_opts "$B" show $dev -j)" "$(opts $dev)"
check "show text" eval '"$B" show $dev | grep -qxE "qdisc pfifo_bulk 1: dev $dev root refcnt [0-9]+ limit 100p bulk_bytes 64Kb bulk_pkts 8 mode nobql effective_mode nobql lockless"'
expect_fail "add over an existing one" 2 '^Error: Exclusivity flag on, cannot modify' \
	"$B" add $dev limit 5
expect_fail "add over an existing one: errno" 2 '^bulkctl: add: File exists$' "$B" add $dev limit 5

check "change one option" "$B" change $dev bulk_pkts 4
check_eq "change kept the others" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	'[100,65536,4,"nobql"]'
check "change every option" "$B" change $dev limit 16777216 bulk_bytes 1.5k bulk_pkts 65536 mode bql
check_eq "change every option: what tc sees" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode, .effective_mode]')" \
	'[16777216,1536,65536,"bql","bql"]'
check "change to the lower bounds" "$B" change $dev limit 1 bulk_bytes 0 bulk_pkts 0 mode auto
check_eq "lower bounds: what tc sees" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	'[1,0,0,"auto"]'
check "replace the existing one" "$B" replace $dev handle 1: limit 77 bulk_pkts 4
check_eq "replace changed it in place" "$(tc -j qdisc show dev $dev | jq -c '.[0] | [.handle, .options.limit, .options.bulk_pkts]')" \
	'["1:",77,4]'
expect_fail "change where there is none" 2 '^Error: Qdisc not found\. To create specify NLM_F_CREATE flag' \
	"$B" change $dev2 limit 5
check "replace creates" "$B" replace $dev2 bulk_pkts 2
check_eq "replace created a pfifo_bulk" "$(kind $dev2)" pfifo_bulk
check "del" "$B" del $dev2
check_eq "del removed it" "$(kind $dev2)" noqueue
expect_fail "del where there is none (noqueue)" 2 '^Error: Invalid qdisc name' "$B" del $dev2
check "pfifo root" tc qdisc add dev $dev2 root handle 1: pfifo
expect_fail "del of another kind" 2 '^Error: Invalid qdisc name' "$B" del $dev2
check_eq "the pfifo is still there" "$(kind $dev2)" pfifo
check "pfifo removed" tc qdisc del dev $dev2 root

# parent and handle, under mq
check "mq root" tc qdisc add dev $mq root handle 1: mq
check "add under mq 1:2" "$B" add $mq parent 1:2 handle 12: bulk_pkts 8
check "replace under mq 1:3" "$B" replace $mq parent 1:3 handle 13: limit 50
check_eq "tc sees both children" \
	"$(tc -j qdisc show dev $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | [.handle, .parent, .options.bulk_pkts, .options.limit]]')" \
	"[[\"12:\",\"1:2\",8,$(cat /sys/class/net/$mq/tx_queue_len)],[\"13:\",\"1:3\",0,50]]"
check "del under mq 1:2" "$B" del $mq parent 1:2 handle 12:
check_eq "one child left" "$(tc -j qdisc show dev $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | .handle]')" '["13:"]'

# --- show ------------------------------------------------------------------------------
all=$("$B" show -j)
check_eq "show: only pfifo_bulk qdiscs" "$(echo "$all" | jq -c '[.[].kind] | unique')" '["pfifo_bulk"]'
check_eq "show: every device" "$(echo "$all" | jq -c "[.[] | select(.dev == \"$dev\" or .dev == \"$mq\") | [.dev, .handle]] | sort")" \
	"[[\"$dev\",\"1:\"],[\"$mq\",\"13:\"]]"
check_eq "show DEV: that device only" "$("$B" show $mq -j | jq -c '[.[] | [.dev, .handle, .parent]]')" \
	"[[\"$mq\",\"13:\",\"1:3\"]]"
check_eq "show DEV without pfifo_bulk: empty" "$("$B" show $dev2 -j)" '[]'
check_eq "show DEV without pfifo_bulk: no text" "$("$B" show $dev2)" ""

check "fresh qdisc for stats" "$B" replace $dev handle 2:
sent=$(pkt_send $dev 500)
check_eq "frames sent" "$sent" 500
keys='{bytes, packets, drops, overlimits, requeues, backlog, qlen, batches, batch_pkts, batch_bytes, mean_batch, batch_hist, end_bytes, end_pkts, end_budget, end_empty, reschedules}'
bs=$("$B" show $dev -s -j | jq -cS ".[0] | $keys")
check_eq "show -s -j = tc -s -j" "$bs" "$(tc -s -j qdisc show dev $dev | jq -cS ".[0] | $keys")"
check_eq "show -s -j: packets, batch_pkts" "$(jq -c '[.packets, .batch_pkts]' <<< "$bs")" '[500,500]'
check "show -s text = tc -s text" \
	diff <("$B" show $dev -s | sed "s/ dev $dev//") <(tc -s qdisc show dev $dev | sed -e 's/ *$//' -e '/^$/d')

# --- watch -----------------------------------------------------------------------------
pkt_load $dev 10
sleep 1
w=$("$B" watch $dev -i 1 -n 2 -j)
check_eq "watch -n 2: two lines" "$(echo "$w" | wc -l)" 2
check_eq "watch: every line valid JSON for $dev" "$(echo "$w" | jq -r .dev | sort -u)" $dev
check_cmp "watch: packets/s, interval 1" "$(echo "$w" | jq -s '.[0].pkts_per_sec')" '>' 0
check_cmp "watch: packets/s, interval 2" "$(echo "$w" | jq -s '.[1].pkts_per_sec')" '>' 0
check_cmp "watch: batches/s, interval 1" "$(echo "$w" | jq -s '.[0].batches_per_sec')" '>' 0
check_cmp "watch: batches/s, interval 2" "$(echo "$w" | jq -s '.[1].batches_per_sec')" '>' 0
check_cmp "watch: mean batch >= 1" "$(echo "$w" | jq -s 'map(.mean_batch) | min')" '>=' 1
# The counters are read while batches are in flight: allow 1% of slack.
shares=$(echo "$w" | jq -cs 'map(.end_bytes_pct + .end_pkts_pct + .end_budget_pct + .end_empty_pct)')
check_cmp "watch: end shares add up to 100% (min)" "$(jq min <<< "$shares")" '>=' 99
check_cmp "watch: end shares add up to 100% (max)" "$(jq max <<< "$shares")" '<=' 101
t=$("$B" watch $dev -i 0.2 -n 1)
check_eq "watch text: header and one line" "$(echo "$t" | wc -l)" 3
check "watch text: numbers" eval 'echo "$t" | tail -n1 | grep -qE "^ *[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$"'
kill $pkt_load_pid 2>/dev/null
wait $pkt_load_pid 2>/dev/null
"$B" watch $dev -i 1 > /dev/null &
wpid=$!
sleep 1.5
kill -INT $wpid
wait $wpid
check_eq "watch: Ctrl-C ends it with status 0" "$?" 0
"$B" watch $dev -i 1 -n 5 > /dev/null 2> /tmp/pfb-watch.$$ &
wpid=$!
sleep 1.5
tc qdisc del dev $dev root
wait $wpid
check_eq "watch: qdisc gone, exit status" "$?" 2
check "watch: qdisc gone, message" grep -q "^bulkctl: watch: no pfifo_bulk qdisc on $dev$" /tmp/pfb-watch.$$
rm -f /tmp/pfb-watch.$$

# --- bad arguments: exit 1, one line naming it, usage; nothing changes -------------
check "qdisc for the bad-argument checks" "$B" add $dev handle 1: limit 100 bulk_pkts 8
before=$(opts $dev)
expect_fail "limit 0" 1 '^bulkctl: change: invalid "limit": "0" \(1\.\.16777216 packets\)$' "$B" change $dev limit 0
expect_fail "bulk_bytes 16777217" 1 'invalid "bulk_bytes": "16777217" \(0\.\.16777216 bytes\)' \
	"$B" change $dev bulk_bytes 16777217
expect_fail "bulk_pkts 65537" 1 'invalid "bulk_pkts": "65537" \(0\.\.65536 packets\)' "$B" change $dev bulk_pkts 65537
expect_fail "mode turbo" 1 'invalid "mode": "turbo"' "$B" change $dev mode turbo
expect_fail "missing value" 1 'missing value for "bulk_pkts"' "$B" change $dev bulk_pkts
expect_fail "duplicate option" 1 'duplicate "limit"' "$B" change $dev limit 5 limit 6
expect_fail "unknown word" 1 'unknown argument "burst"' "$B" change $dev burst 3
expect_fail "bad handle" 1 'invalid "handle": "x"' "$B" replace $dev handle x
expect_fail "no such device" 1 '^bulkctl: change: cannot find device "nosuchdev0"$' "$B" change nosuchdev0 limit 5
err=$("$B" change $dev limit 0 2>&1 >/dev/null)
check_eq "bad argument: message, then usage" "$(echo "$err" | sed -n 2p | cut -c1-14)" "Usage: bulkctl"
check_eq "bad arguments changed nothing" "$(opts $dev)" "$before"

# --- permissions ---------------------------------------------------------------------------
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
expect_fail "add without CAP_NET_ADMIN" 2 \
	'^bulkctl: add: Operation not permitted \(changing a qdisc needs CAP_NET_ADMIN\)$' \
	"${nobody[@]}" "$B" add $dev2 limit 5
check_eq "show works without CAP_NET_ADMIN" "$("${nobody[@]}" "$B" show $dev -j | jq -r '.[0].kind')" pfifo_bulk
check_eq "EPERM changed nothing" "$(kind $dev2)" noqueue

# --- the multiqueue root warning is shown, the request succeeds ---------------------------
err=$("$B" replace $mq limit 10 2>&1 >/dev/null)
check_eq "multiqueue root: exit status" "$?" 0
check "multiqueue root: kernel warning printed" eval 'echo "$err" | grep -q "^Warning: "'
check_eq "multiqueue root: pfifo_bulk at root" "$(kind $mq)" pfifo_bulk

# --- valgrind -----------------------------------------------------------------------------------
if command -v valgrind >/dev/null; then
	vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect)
	check "valgrind: show -s -j" eval '"${vg[@]}" "$B" show -s -j >/dev/null'
	check "valgrind: add" "${vg[@]}" "$B" add $dev2 limit 10 bulk_bytes 64k
	check "valgrind: del" "${vg[@]}" "$B" del $dev2
fi

pfb_exit
