#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bulkctl against the kernel qdisc. Proves: without the module, add says to
# modprobe sch_pfifo_bulk, in one line; add, change, replace and del send the
# right netlink flags (add refuses an existing qdisc, change needs one and
# says to use add or replace, or replace over another kind, replace
# creates or changes, del only removes a
# pfifo_bulk), with "dev", root, parent and handle, and only the options
# given change; -n NETNS works as ip -n; show lists only pfifo_bulk qdiscs,
# all of them or one device's (nothing, exit 0, when DEV has none, as tc), and
# prints what tc prints, byte for byte, in text, -j and -s -j; watch prints
# non-zero packet and batch rates for two intervals under load, a line per
# qdisc of an mq and their total, keeps each qdisc's counters apart so that
# deleting and re-creating one child adds nothing to an interval, stops on
# count and on Ctrl-C, and fails when the qdisc goes away; bad syntax exits
# 1 with one line naming the word and changes nothing; out-of-range values
# and other kernel refusals exit 2 with the kernel's message on one line;
# EPERM is explained; a request and its ack (add) and a dump with its
# statistics (watch on an mq) are valgrind-clean. (The argv fuzz, and
# valgrind on every print path, run on the host: host_bulkctl_fuzz.sh,
# host_valgrind.sh.)

. "$(dirname "$0")/lib.sh"
require_root
require_cmd tc jq python3 taskset ethtool
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_refnic.sh"

B=$BULKCTL

# --- without the module: what to do --------------------------------------------------
if lsmod | grep -q '^sch_pfifo_bulk ' || modprobe -n -q sch_pfifo_bulk 2>/dev/null; then
	echo "# sch_pfifo_bulk is loaded or installed: the modprobe hint is not checked here"
else
	expect_fail "no module: add" 2 '^Error: the kernel has no pfifo_bulk qdisc: modprobe sch_pfifo_bulk\.$' \
		"$B" add dev lo limit 5
	err=$("$B" add lo limit 5 2>&1)
	check_eq "no module: one line" "$(wc -l <<< "$err")" 1
	check "no module: not the old second line" eval '! grep -q "No such file or directory" <<< "$err"'
fi
load_module sch_pfifo_bulk
load_module refnic
# a root runs in the mode the module was loaded with (lib.sh)
lockless=$(qdisc_lockless)

dev=pfbbc0
dev2=pfbbc1
mq=pfbbc2
mq2=pfbbc3
ns=pfbbcns
dummy_add $dev || exit 1
dummy_add $dev2 || exit 1
dummy_add $mq numtxqueues 4 || exit 1
dummy_add $mq2 numtxqueues 2 || exit 1

opts() {
	root_opts tc -j qdisc show dev "$1"
}
kind() {
	tc -j qdisc show dev "$1" | jq -r '[.[] | select(.root == true)][0].kind'
}

# --- add, change, replace, del ---------------------------------------------------
check "add" "$B" add dev $dev handle 1: limit 100 bulk_bytes 64k bulk_pkts 8 mode nobql
check_eq "add: what tc sees" "$(opts $dev)" \
	'{"bulk_bytes":65536,"bulk_pkts":8,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":100,"lockless":'"$lockless"',"mode":"nobql"}'
check_eq "add: handle" "$(tc -j qdisc show dev $dev | jq -r '.[0].handle')" 1:
check "show = tc, byte for byte" diff <("$B" show dev $dev) <(tc qdisc show dev $dev)
check "show -j = tc -j, byte for byte" diff <("$B" -j show $dev) <(tc -j qdisc show dev $dev)
check "show text" eval '"$B" show $dev | grep -qxE "qdisc pfifo_bulk 1: root refcnt [0-9]+ limit 100p bulk_bytes 64Kb bulk_pkts 8 mode nobql effective_mode nobql $(qdisc_lock_word) "'
expect_fail "add over an existing one" 2 '^Error: Exclusivity flag on, cannot modify\.$' \
	"$B" add $dev limit 5
err=$("$B" add $dev limit 5 2>&1)
check_eq "add over an existing one: one line" "$(wc -l <<< "$err")" 1
check "add over an existing one: not the old errno line" eval '! grep -q "bulkctl: add: File exists" <<< "$err"'

check "change one option" "$B" change $dev bulk_pkts 4
check_eq "change kept the others" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	'[100,65536,4,"nobql"]'
check "change every option" "$B" change dev $dev limit 16777216 bulk_bytes 1.5k bulk_pkts 65536 mode bql
check_eq "change every option: what tc sees" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode, .effective_mode]')" \
	'[16777216,1536,65536,"bql","bql"]'
check "change to the lower bounds" "$B" change $dev limit 1 bulk_bytes 0 bulk_pkts 0 mode auto
check_eq "lower bounds: what tc sees" "$(opts $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	'[1,0,0,"auto"]'
check "replace the existing one" "$B" replace $dev handle 1: limit 77 bulk_pkts 4
check_eq "replace changed it in place" "$(tc -j qdisc show dev $dev | jq -c '.[0] | [.handle, .options.limit, .options.bulk_pkts]')" \
	'["1:",77,4]'
expect_fail "change where there is none" 2 "^Error: no qdisc to change on $dev2 \\(the kernel changes no default one, handle 0\\): use add or replace\.\$" \
	"$B" change $dev2 limit 5
err=$("$B" change $dev2 limit 5 2>&1)
check "change where there is none: not the kernel's NLM_F_CREATE" \
	eval '! grep -q "NLM_F_CREATE" <<< "$err"'
check "replace creates" "$B" replace $dev2 bulk_pkts 2
check_eq "replace created a pfifo_bulk" "$(kind $dev2)" pfifo_bulk
check "del" "$B" del dev $dev2
check_eq "del removed it" "$(kind $dev2)" noqueue
# (The kernel's text: 7.x adds ": must match existing qdisc".)
expect_fail "del where there is none (noqueue)" 2 \
	'^Error: Invalid qdisc name(: must match existing qdisc)?\.$' "$B" del $dev2
check "pfifo root" tc qdisc add dev $dev2 root handle 1: pfifo
expect_fail "del of another kind" 2 '^Error: Invalid qdisc name' "$B" delete $dev2
# (without a handle the kernel takes a change of another kind for a create)
expect_fail "change of another kind, by handle" 2 \
	"^Error: the qdisc on $dev2 is not pfifo_bulk: use replace\.\$" "$B" change $dev2 handle 1: limit 5
check_eq "the pfifo is still there" "$(kind $dev2)" pfifo
check "pfifo removed" tc qdisc del dev $dev2 root

# parent and handle, under mq
check "mq root" tc qdisc add dev $mq root handle 1: mq
check "add under mq 1:2" "$B" add $mq parent 1:2 handle 12: bulk_pkts 8
check "replace under mq 1:3" "$B" replace dev $mq parent 1:3 handle 13: limit 50
check_eq "tc sees both children" \
	"$(tc -j qdisc show dev $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | [.handle, .parent, .options.bulk_pkts, .options.limit]]')" \
	"[[\"12:\",\"1:2\",8,$(cat /sys/class/net/$mq/tx_queue_len)],[\"13:\",\"1:3\",0,50]]"
check "del under mq 1:2" "$B" del $mq parent 1:2 handle 12:
check_eq "one child left" "$(tc -j qdisc show dev $mq | jq -c '[.[] | select(.kind == "pfifo_bulk") | .handle]')" '["13:"]'

# parent :1: a child of the default mq (handle 0), as tc prints it; bulkctl
# reads it back as tc does. The kernel addresses no qdisc under a handle-0
# root (qdisc_lookup(dev, 0) finds nothing: "Failed to find specified
# qdisc") and changes no default qdisc (handle 0), for tc as for bulkctl:
# with the mq given a handle (1:), its children are replaced, then changed.
defmq=pfbbc5
old_default=$(sysctl -n net.core.default_qdisc)
defer "sysctl -qw net.core.default_qdisc=$old_default"
check "default qdisc pfifo_bulk" sysctl -qw net.core.default_qdisc=pfifo_bulk
must ip link add $defmq numtxqueues 4 type refnic
defer "ip link del $defmq"
# No IPv6 autoconf chatter: a frame sent between bulkctl's dump and tc's
# would move the -s counters and make the two differ.
sysctl -qw net.ipv6.conf.$defmq.disable_ipv6=1
must ip link set $defmq up
qlen=$(cat /sys/class/net/$defmq/tx_queue_len)
check_eq "default mq: its children as bulkctl prints them" \
	"$("$B" -j show $defmq | jq -c '[.[] | [.handle, .parent]] | sort')" \
	'[["0:",":1"],["0:",":2"],["0:",":3"],["0:",":4"]]'
# (effective_mode "auto" follows the device's BQL state between two dumps)
check "show = tc on the default mq, byte for byte" \
	diff <("$B" -s show dev $defmq | sed 's/effective_mode [a-z]*//') \
	<(tc -s qdisc show dev $defmq | awk '/^qdisc /{ p = $2 == "pfifo_bulk" } p' | sed 's/effective_mode [a-z]*//')
check "-j show = tc -j on the default mq, byte for byte" \
	diff <("$B" -j show dev $defmq | command jq -c 'map(del(.options.effective_mode))') \
	<(tc -j qdisc show dev $defmq | command jq -c 'map(select(.kind == "pfifo_bulk") | del(.options.effective_mode))')
for verb in change replace; do
	tc qdisc $verb dev $defmq parent :1 pfifo_bulk limit 77 2> /tmp/pfb-tc.$$
	want="$?:$(cat /tmp/pfb-tc.$$)"
	check_eq "$verb parent :1 of the default mq: what tc gets" "$want" \
		"2:Error: Failed to find specified qdisc."
	err=$("$B" $verb $defmq parent :1 limit 77 2>&1)
	check_eq "$verb parent :1 of the default mq: bulkctl gets the same" "$?:$err" "$want"
done
rm -f /tmp/pfb-tc.$$
check "the mq gets handle 1:" tc qdisc replace dev $defmq root handle 1: mq
sysctl -qw net.core.default_qdisc="$old_default"
expect_fail "change of a default child (handle 0), as tc" 2 \
	"^Error: no qdisc to change on $defmq \\(the kernel changes no default one, handle 0\\): use add or replace\\.\$" \
	"$B" change $defmq parent 1:1 limit 77
check "replace $defmq parent 1:1" "$B" replace $defmq parent 1:1 limit 77 coalesce_usecs 1ms
check "change $defmq parent 1:1" "$B" change $defmq parent 1:1 limit 0x400
check_eq "parent 1:1 replaced and changed, its siblings not" \
	"$(tc -j qdisc show dev $defmq | jq -c '[.[] | select(.kind == "pfifo_bulk") | [.parent, .handle != "0:", .options.limit, .options.coalesce_usecs]] | sort')" \
	"[[\"1:1\",true,1024,1000],[\"1:2\",false,$qlen,0],[\"1:3\",false,$qlen,0],[\"1:4\",false,$qlen,0]]"

# -n NETNS, as ip -n
netns_add $ns
check "device in $ns" ip -n $ns link add pfbbcn0 type dummy
check "-n $ns add" "$B" -n $ns add dev pfbbcn0 limit 7
check_eq "-n $ns: the qdisc is in $ns" "$(ip netns exec $ns tc -j qdisc show dev pfbbcn0 | jq -c '.[0] | [.kind, .options.limit]')" \
	'["pfifo_bulk",7]'
check_eq "-n $ns -j show" "$("$B" -n $ns -j show pfbbcn0 | jq -c '.[0].options.limit')" 7
expect_fail "-n $ns: the host's devices are not there" 1 'cannot find device "pfbbc0"' "$B" -n $ns show $dev

# --- show ------------------------------------------------------------------------------
all=$("$B" -j show)
check_eq "show: only pfifo_bulk qdiscs" "$(echo "$all" | jq -c '[.[].kind] | unique')" '["pfifo_bulk"]'
check_eq "show: every device" "$(echo "$all" | jq -c "[.[] | select(.dev == \"$dev\" or .dev == \"$mq\") | [.dev, .handle]] | sort")" \
	"[[\"$dev\",\"1:\"],[\"$mq\",\"13:\"]]"
check_eq "show DEV: that device only" "$("$B" -j show $mq | jq -c '[.[] | [.handle, .parent]]')" \
	'[["13:","1:3"]]'
check_eq "show DEV without pfifo_bulk: exit 0 and nothing, as tc" "$("$B" show $dev2 2>&1; echo $?)" 0
check_eq "show DEV without pfifo_bulk: -j prints an empty array" "$("$B" -j show dev $dev2 2>&1)" '[]'

check "fresh qdisc for stats" "$B" replace $dev handle 2:
sent=$(pkt_send $dev 500)
check_eq "frames sent" "$sent" 500
keys='{bytes, packets, drops, overlimits, requeues, backlog, qlen, batches, batch_pkts, batch_bytes, batch_hist, end_bytes, end_pkts, end_budget, end_empty, reschedules, bypassed}'
bs=$("$B" -s -j show $dev | jq -cS ".[0] | $keys")
check_eq "-s -j show = tc -s -j" "$bs" "$(tc -s -j qdisc show dev $dev | jq -cS ".[0] | $keys")"
check_eq "-s -j show: packets, batch_pkts + bypassed" "$(jq -c '[.packets, .batch_pkts + .bypassed]' <<< "$bs")" '[500,500]'
check "-s show = tc -s, byte for byte" diff <("$B" -s show $dev) <(tc -s qdisc show dev $dev)
check "-s -j show = tc -s -j, byte for byte" diff <("$B" -s -j show $dev) <(tc -s -j qdisc show dev $dev)

# --- watch -----------------------------------------------------------------------------
# One sender on the dummy finds the qdisc idle and empty every time: all
# its packets are bypassed. On a refnic device that is the bottleneck a
# backlog forms batches.
check "load on $dev" pkt_load $dev 120
w=$("$B" -j watch $dev interval 1 count 1)
kill $pkt_load_pid 2>/dev/null
wait $pkt_load_pid 2>/dev/null
check_cmp "watch on a dummy: packets/s" "$(jq .pkts_per_sec <<< "$w")" '>' 0
# (the bypassed count can lag by the packets the sender sends while one
# dump runs, a packet or two: 1 % of the 12,000 a second seen on a loaded
# host is over a hundred; a guest at half speed halves that margin, not
# the lag)
check_cmp "watch on a dummy: bypass share 100% (min)" "$(jq .bypass_pct <<< "$w")" '>=' 99
check_cmp "watch on a dummy: bypass share 100% (max)" "$(jq .bypass_pct <<< "$w")" '<=' 101
check_eq "watch on a dummy: no batch" "$(jq .batches_per_sec <<< "$w")" 0
wdev=pfbbc4
refnic_device_bound $wdev
check "pfifo_bulk on $wdev" "$B" add $wdev handle 2:
# The bottleneck is BQL, not the line: with at most 120 bytes in flight and
# completions every 10 ms the device takes about 300 frames a second, where
# pktgen on a debug kernel (1,200 per second seen) does not fill the 2 Mb/s
# line.
check "BQL: at most 120 bytes in flight" \
	eval "echo 120 > /sys/class/net/$wdev/queues/tx-0/byte_queue_limits/limit_max"
tx0=$(link_stat $wdev tx_packets)
REFNIC_PKTGEN_CPUS=1 refnic_pktgen $wdev queue_xmit 0 &
pg_pid=$!
defer refnic_pktgen_stop
check "load on $wdev" wait_sent $wdev "$tx0"
# (the load runs until stopped, so the wait before watch bounds nothing;
# BQL lets about 300 frames a second out, fewer than one pktgen thread
# offers at any guest speed: every interval has packets and batches)
sleep 1
w=$("$B" -j watch $wdev interval 1 count 2)
check_eq "watch count 2: two lines" "$(echo "$w" | wc -l)" 2
check_eq "watch: every line valid JSON for $wdev" "$(echo "$w" | jq -r .dev | sort -u)" $wdev
check_eq "watch: one qdisc per line" "$(echo "$w" | jq -c '[.qdiscs[] | [.handle, .parent]]' | sort -u)" '[["2:","root"]]'
check_cmp "watch: packets/s, interval 1" "$(echo "$w" | jq -s '.[0].pkts_per_sec')" '>' 0
check_cmp "watch: packets/s, interval 2" "$(echo "$w" | jq -s '.[1].pkts_per_sec')" '>' 0
check_cmp "watch: batches/s, interval 1" "$(echo "$w" | jq -s '.[0].batches_per_sec')" '>' 0
check_cmp "watch: batches/s, interval 2" "$(echo "$w" | jq -s '.[1].batches_per_sec')" '>' 0
check_cmp "watch: mean batch >= 1" "$(echo "$w" | jq -s 'map(.mean_batch) | min')" '>=' 1
check_eq "watch: the total is the qdisc's" "$(echo "$w" | jq -c 'select(.pkts_per_sec != .qdiscs[0].pkts_per_sec)')" ""
check "watch: JSON numbers in plain decimal (no %g exponent)" eval '! grep -qE "[0-9]e[+-]?[0-9]" <<< "$w"'
# The counters are read while a batch may be in flight, at each end of the
# interval: the ends may miss, or count ahead, by a batch at each. (In
# batches, not in percent: a debug kernel has 60 batches in an interval.)
ends=$(echo "$w" | jq -cs 'map((.end_bytes_pct + .end_pkts_pct + .end_budget_pct + .end_empty_pct - 100) / 100 * .batches_per_sec * .interval)')
check_cmp "watch: every batch has one end reason (min, in batches)" "$(jq min <<< "$ends")" '>=' -2
check_cmp "watch: every batch has one end reason (max, in batches)" "$(jq max <<< "$ends")" '<=' 2
check_cmp "watch: bypass share (min)" "$(echo "$w" | jq -s 'map(.bypass_pct) | min')" '>=' 0
check_cmp "watch: bypass share (max)" "$(echo "$w" | jq -s 'map(.bypass_pct) | max')" '<=' 100
t=$("$B" watch dev $wdev interval 0.2 count 1)
check_eq "watch text: header and one line" "$(echo "$t" | wc -l)" 4
check "watch text: the qdisc, then numbers" eval 'echo "$t" | tail -n1 | grep -qE "^2: root +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$"'
refnic_pktgen_end $pg_pid
# watch_started PID FILE: wait until watch PID has written its first
# interval to FILE (it flushes its output once an interval is over, long
# after it set its signal handlers and took its first sample): a slow
# guest may take more than a fixed second or two to get there. 20 s only
# stops a watch that never reports.
watch_started() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -s "$2" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
"$B" watch $dev interval 1 > /tmp/pfb-watch-out.$$ &
wpid=$!
check "watch: running" watch_started $wpid /tmp/pfb-watch-out.$$
kill -INT $wpid
wait $wpid
check_eq "watch: Ctrl-C ends it with status 0" "$?" 0
# (count 30: it must still run, whatever the guest's speed, when the qdisc
# goes)
"$B" watch $dev interval 1 count 30 > /tmp/pfb-watch-out.$$ 2> /tmp/pfb-watch.$$ &
wpid=$!
check "watch: running, before the qdisc goes" watch_started $wpid /tmp/pfb-watch-out.$$
tc qdisc del dev $dev root
wait $wpid
check_eq "watch: qdisc gone, exit status" "$?" 2
check "watch: qdisc gone, message" grep -qx "bulkctl: watch: no pfifo_bulk qdisc on $dev" /tmp/pfb-watch.$$
rm -f /tmp/pfb-watch.$$ /tmp/pfb-watch-out.$$

# Per qdisc: an mq with two pfifo_bulk children, 1000 frames through each
# (XPS steers CPU 0's frames to one queue, then to the other). While watch
# runs, one child is deleted and created again: its counters restart from 0.
# Taken as one sum, that drop would read as a reset and the 1000 frames of
# the other child would show up as one interval's rate; per qdisc, nothing
# was sent, so every rate is 0.
xps=/sys/class/net/$mq2/queues
check "mq root on $mq2" tc qdisc add dev $mq2 root handle 1: mq
check "child 1:1" "$B" add $mq2 parent 1:1 handle 11:
check "child 1:2" "$B" add $mq2 parent 1:2 handle 12:
echo 1 > $xps/tx-0/xps_cpus && echo 0 > $xps/tx-1/xps_cpus
taskset -c 0 python3 "$PFB_TESTDIR/pfb_pktsend.py" $mq2 1000 > /dev/null
echo 0 > $xps/tx-0/xps_cpus && echo 1 > $xps/tx-1/xps_cpus
taskset -c 0 python3 "$PFB_TESTDIR/pfb_pktsend.py" $mq2 1000 > /dev/null
check_eq "1000 frames through each child" \
	"$(tc -s -j qdisc show dev $mq2 | jq -c '[.[] | select(.kind == "pfifo_bulk") | [.handle, .packets]] | sort')" \
	'[["11:",1000],["12:",1000]]'
"$B" -j watch $mq2 interval 1 count 3 > /tmp/pfb-watch.$$ &
wpid=$!
for i in $(seq 50); do
	[ "$(wc -l < /tmp/pfb-watch.$$)" -ge 1 ] && break
	sleep 0.1
done
# In one tc process, so that no interval can end between the two (on a
# debug kernel tc takes a second to start). The first line comes once the
# first interval is over: the re-creation falls in the second of three,
# however slow the guest.
check "child 1:2 deleted and created again" tc -batch - <<-EOF
	qdisc del dev $mq2 parent 1:2 handle 12:
	qdisc add dev $mq2 parent 1:2 handle 12: pfifo_bulk
	EOF
wait $wpid
check_eq "watch over the re-creation: exit status" "$?" 0
w=$(cat /tmp/pfb-watch.$$)
rm -f /tmp/pfb-watch.$$
check_eq "watch: three intervals" "$(echo "$w" | wc -l)" 3
check_eq "watch: a line for each queue's qdisc, in queue order" \
	"$(echo "$w" | jq -c '[.qdiscs[] | [.handle, .parent]]' | sort -u)" '[["11:","1:1"],["12:","1:2"]]'
check_eq "watch: no interval counts the other child's 1000 frames" \
	"$(echo "$w" | jq -s -c 'map([.pkts_per_sec] + [.qdiscs[].pkts_per_sec]) | flatten | max')" 0
t=$("$B" watch $mq2 interval 0.2 count 1)
check_eq "watch text on an mq: header, a line per queue in order, the total" \
	"$(echo "$t" | tail -n +4 | awk '{ print $1 }' | tr '\n' ' ')" "11: 12: total "

# --- bad arguments: exit 1, one line naming it; out of range: the kernel's -------
check "qdisc for the bad-argument checks" "$B" add $dev handle 1: limit 100 bulk_pkts 8
before=$(opts $dev)
expect_fail "limit x" 1 '^bulkctl: change: invalid "limit": "x" \(a number of packets\)$' "$B" change $dev limit x
expect_fail "mode turbo" 1 'invalid "mode": "turbo"' "$B" change $dev mode turbo
expect_fail "missing value" 1 'missing value for "bulk_pkts"' "$B" change $dev bulk_pkts
expect_fail "duplicate option" 1 'duplicate "limit"' "$B" change $dev limit 5 limit 6
expect_fail "unknown word" 1 'unknown argument "burst"' "$B" change $dev burst 3
expect_fail "bad handle" 1 'invalid "handle": "x"' "$B" replace $dev handle x
expect_fail "no such device" 1 '^bulkctl: change: cannot find device "nosuchdev0"$' "$B" change nosuchdev0 limit 5
err=$("$B" change $dev limit x 2>&1 >/dev/null)
check_eq "bad argument: one line, no usage" "$(wc -l <<< "$err")" 1
expect_fail "limit 0: the kernel's range" 2 \
	'^Error: pfifo_bulk: TCA_PFIFO_BULK_LIMIT \(limit\) must be a u32 in 1\.\.16777216 packets\.$' \
	"$B" change $dev limit 0
expect_fail "bulk_bytes 16777217: the kernel's range" 2 \
	'^Error: pfifo_bulk: TCA_PFIFO_BULK_BULK_BYTES \(bulk_bytes\) must be a u32 in 0\.\.16777216 bytes' \
	"$B" change $dev bulk_bytes 16777217
expect_fail "bulk_pkts 65537: the kernel's range" 2 \
	'^Error: pfifo_bulk: TCA_PFIFO_BULK_BULK_PKTS \(bulk_pkts\) must be a u32 in 0\.\.65536 packets' \
	"$B" change $dev bulk_pkts 65537
err=$("$B" change $dev limit 0 2>&1 >/dev/null)
check_eq "kernel refusal: one line" "$(wc -l <<< "$err")" 1
check_eq "bad arguments changed nothing" "$(opts $dev)" "$before"

# --- permissions ---------------------------------------------------------------------------
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
expect_fail "add without CAP_NET_ADMIN" 2 \
	'^RTNETLINK answers: Operation not permitted \(changing a qdisc needs CAP_NET_ADMIN\)$' \
	"${nobody[@]}" "$B" add $dev2 limit 5
check_eq "show works without CAP_NET_ADMIN" "$("${nobody[@]}" "$B" -j show $dev | jq -r '.[0].kind')" pfifo_bulk
check_eq "EPERM changed nothing" "$(kind $dev2)" noqueue

# --- the multiqueue root warning is shown, the request succeeds ---------------------------
err=$("$B" replace $mq limit 10 2>&1 >/dev/null)
check_eq "multiqueue root: exit status" "$?" 0
check "multiqueue root: kernel warning printed" eval 'echo "$err" | grep -q "^Warning: "'
check_eq "multiqueue root: pfifo_bulk at root" "$(kind $mq)" pfifo_bulk

# --- valgrind -----------------------------------------------------------------------------------
if command -v valgrind >/dev/null; then
	vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect)
	# (valgrind starts in about 12 s in a TCG guest: two runs only)
	check "valgrind: add" "${vg[@]}" "$B" add $dev2 limit 10 bulk_bytes 64k
	check "valgrind: watch on an mq" eval '"${vg[@]}" "$B" watch $mq2 interval 0.2 count 2 >/dev/null'
	check "del" "$B" del $dev2
fi

pfb_exit
