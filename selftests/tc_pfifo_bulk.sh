#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tc plugin (q_pfifo_bulk.so) against the kernel qdisc. Proves: help
# and the defaults (a cap of 0 is not printed: no "bulk_bytes 0b"); every
# option round-trips through tc (text, sizes as tc prints them, and -j),
# agreeing with bulkctl and with the kernel's own dump read with raw
# netlink; change touches only what it names, replace creates or changes;
# bad syntax fails with tc's exit code and message, an out-of-range value
# with the kernel's message naming the option and its range (no range check
# of the plugin's own), and neither changes anything; after known traffic
# the statistics in "tc -s" and "tc -s -j" add up (packets = batch_pkts +
# bypassed, histogram and end reasons sum to batches, the text's mean =
# batch_pkts / batches, no mean in JSON)
# and equal bulkctl's and the raw dump's.

. "$(dirname "$0")/lib.sh"
require_root
require_cmd tc jq python3 ethtool
. "$(dirname "$0")/lib_userspace.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
load_module sch_pfifo_bulk
load_module refnic

dev=pfbtc0
dev2=pfbtc1
dummy_add $dev || exit 1
dummy_add $dev2 || exit 1
txqlen=$(cat /sys/class/net/$dev/tx_queue_len)

root_text() {
	tc qdisc show dev $dev | sed 's/ *$//'
}

# --- help and defaults ------------------------------------------------------
expect_fail "help" 1 '^Usage: \.\.\. pfifo_bulk \[ limit PACKETS \]' \
	tc qdisc add dev $dev root pfifo_bulk help
check "add with defaults" tc qdisc add dev $dev root handle 1: pfifo_bulk
check_eq "defaults" "$(root_opts tc -j qdisc show dev $dev | jq -c '[.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	"[$txqlen,0,0,\"auto\"]"
# A root runs in the mode the module was loaded with (lib.sh: qdisc_lockless).
lockless=$(qdisc_lockless)
lock_word=$(qdisc_lock_word)
check "default text (effective_mode bql or nobql, $lock_word)" eval 'root_text | grep -qxE "qdisc pfifo_bulk 1: root refcnt [0-9]+ limit ${txqlen}p mode auto effective_mode (bql|nobql) $lock_word"'
check "default text: no \"bulk_bytes 0b\", no \"bulk_pkts 0\"" eval '! root_text | grep -qE "bulk_bytes 0b|bulk_pkts 0"'

# --- every option round-trips -------------------------------------------------
# Each row sets options (bounds, units, modes) and wants all of them back from
# tc -j, tc's text and bulkctl -j. Modes bql and nobql force the path, so
# effective_mode follows them (auto is checked with the defaults). The rows
# say lockless; the root is in the module's mode.
while read -r args json text <&3; do
	json=${json//'"lockless":true'/"\"lockless\":$lockless"}
	text=${text//,lockless/,$lock_word}
	check "change $args" tc qdisc change dev $dev root pfifo_bulk ${args//,/ }
	check_eq "$args: tc -j" "$(root_opts tc -j qdisc show dev $dev)" "$json"
	check_eq "$args: tc text" "$(root_text | sed 's/.* refcnt [0-9]* //')" "${text//,/ }"
	check_eq "$args: bulkctl -j" "$(root_opts "$BULKCTL" -j show $dev)" "$json"
done 3<<'EOF'
limit,1,bulk_bytes,3000,bulk_pkts,1,mode,bql {"bulk_bytes":3000,"bulk_pkts":1,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"bql","limit":1,"lockless":true,"mode":"bql"} limit,1p,bulk_bytes,3000b,bulk_pkts,1,mode,bql,effective_mode,bql,lockless
limit,16777216,bulk_bytes,64k,bulk_pkts,65536,mode,nobql {"bulk_bytes":65536,"bulk_pkts":65536,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":16777216,"lockless":true,"mode":"nobql"} limit,16777216p,bulk_bytes,64Kb,bulk_pkts,65536,mode,nobql,effective_mode,nobql,lockless
limit,500,bulk_bytes,1.5k,bulk_pkts,0,mode,nobql {"bulk_bytes":1536,"bulk_pkts":0,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":500,"lockless":true,"mode":"nobql"} limit,500p,bulk_bytes,1536b,mode,nobql,effective_mode,nobql,lockless
limit,2,bulk_bytes,8kbit,bulk_pkts,9,mode,bql {"bulk_bytes":1024,"bulk_pkts":9,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"bql","limit":2,"lockless":true,"mode":"bql"} limit,2p,bulk_bytes,1Kb,bulk_pkts,9,mode,bql,effective_mode,bql,lockless
limit,1000,bulk_bytes,16m,bulk_pkts,16,mode,nobql {"bulk_bytes":16777216,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":1000,"lockless":true,"mode":"nobql"} limit,1000p,bulk_bytes,16Mb,bulk_pkts,16,mode,nobql,effective_mode,nobql,lockless
bulk_bytes,65540,mode,bql {"bulk_bytes":65540,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"bql","limit":1000,"lockless":true,"mode":"bql"} limit,1000p,bulk_bytes,64Kb,bulk_pkts,16,mode,bql,effective_mode,bql,lockless
bulk_bytes,0,mode,bql {"bulk_bytes":0,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"bql","limit":1000,"lockless":true,"mode":"bql"} limit,1000p,bulk_pkts,16,mode,bql,effective_mode,bql,lockless
limit,0x400,bulk_pkts,020,coalesce_usecs,800us {"bulk_bytes":0,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":800,"effective_mode":"bql","limit":1024,"lockless":true,"mode":"bql"} limit,1024p,bulk_pkts,16,mode,bql,effective_mode,bql,lockless,coalesce_usecs,800us,coalesce_pkts,8
coalesce_usecs,1.5ms {"bulk_bytes":0,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":1500,"effective_mode":"bql","limit":1024,"lockless":true,"mode":"bql"} limit,1024p,bulk_pkts,16,mode,bql,effective_mode,bql,lockless,coalesce_usecs,1.5ms,coalesce_pkts,8
coalesce_usecs,2s {"bulk_bytes":0,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":2000000,"effective_mode":"bql","limit":1024,"lockless":true,"mode":"bql"} limit,1024p,bulk_pkts,16,mode,bql,effective_mode,bql,lockless,coalesce_usecs,2s,coalesce_pkts,8
coalesce_usecs,0 {"bulk_bytes":0,"bulk_pkts":16,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"bql","limit":1024,"lockless":true,"mode":"bql"} limit,1024p,bulk_pkts,16,mode,bql,effective_mode,bql,lockless
EOF

# The kernel's own dump, read with raw netlink, has what tc and bulkctl show.
check "change to distinct values" tc qdisc change dev $dev root pfifo_bulk limit 300 bulk_bytes 3000 bulk_pkts 8 mode nobql
modes='["auto", "bql", "nobql", "none"] as $m'
check_eq "kernel dump = tc -j" \
	"$(nl_dump $dev | jq -cS "$modes | .[0].options | .mode = \$m[.mode] | .effective_mode = \$m[.effective_mode] | .lockless = (.lockless == 1)")" \
	"$(root_opts tc -j qdisc show dev $dev)"

# --- change touches only what it names; replace ------------------------------------
check "change all four" tc qdisc change dev $dev root pfifo_bulk limit 300 bulk_bytes 3000 bulk_pkts 8 mode nobql
check "change bulk_pkts only" tc qdisc change dev $dev root pfifo_bulk bulk_pkts 4
check_eq "others kept" "$(tc -j qdisc show dev $dev | jq -c '.[0].options | [.limit, .bulk_bytes, .bulk_pkts, .mode]')" \
	'[300,3000,4,"nobql"]'
check "replace existing" tc qdisc replace dev $dev root handle 1: pfifo_bulk limit 77
check_eq "replace changed limit, kept the rest" \
	"$(tc -j qdisc show dev $dev | jq -c '.[0] | [.handle, .options.limit, .options.bulk_pkts]')" '["1:",77,4]'
check "replace creates" tc qdisc replace dev $dev2 root pfifo_bulk bulk_pkts 2 mode bql
check_eq "replace created with the options" \
	"$(tc -j qdisc show dev $dev2 | jq -c '.[0] | [.kind, .options.bulk_pkts, .options.mode]')" '["pfifo_bulk",2,"bql"]'
check "del" tc qdisc del dev $dev2 root
check_eq "deleted" "$(tc -j qdisc show dev $dev2 | jq -r '.[0].kind')" noqueue

# --- bad input: tc's exit codes and messages, nothing changes -------------------------
before=$(tc -j qdisc show dev $dev | jq -cS '.[0].options')
ch=(tc qdisc change dev $dev root pfifo_bulk)
# Syntax: the plugin, exit 1.
expect_fail "limit -1" 1 '^pfifo_bulk: Illegal value for "limit": "-1" \(a number of packets\)$' "${ch[@]}" limit -1
expect_fail "limit 1k" 1 'Illegal value for "limit": "1k"' "${ch[@]}" limit 1k
expect_fail "bulk_bytes 12parsecs" 1 'Illegal value for "bulk_bytes": "12parsecs"' "${ch[@]}" bulk_bytes 12parsecs
expect_fail "bulk_pkts x" 1 'Illegal value for "bulk_pkts": "x"' "${ch[@]}" bulk_pkts x
expect_fail "mode turbo" 1 'Illegal value for "mode": "turbo" \(auto, bql or nobql\)' "${ch[@]}" mode turbo
expect_fail "unknown word" 1 '^pfifo_bulk: unknown parameter "burst"' "${ch[@]}" burst 3
expect_fail "missing value" 255 '^Command line is not complete' "${ch[@]}" limit
expect_fail "duplicate" 255 'duplicate "limit": "6" is the second value' "${ch[@]}" limit 5 limit 6
expect_fail "good values then a bad one" 1 'Illegal value for "mode": "x"' \
	"${ch[@]}" limit 9 bulk_pkts 9 mode x
# Ranges: the kernel's policy, exit 2, its message naming option and range,
# and nothing of the plugin's own ("Illegal value ...").
while read -r args pat <&3; do
	args=${args//,/ }
	err=$("${ch[@]}" $args 2>&1 >/dev/null)
	check_eq "$args: exit status" "$?" 2
	check "$args: the kernel's message" grep -qxE "Error: pfifo_bulk: $pat" <<< "$err"
	check "$args: no range check in the plugin" eval '! grep -q "Illegal value" <<< "$err"'
done 3<<'EOF'
limit,0 TCA_PFIFO_BULK_LIMIT \(limit\) must be a u32 in 1\.\.16777216 packets\.
limit,16777217 TCA_PFIFO_BULK_LIMIT \(limit\) must be a u32 in 1\.\.16777216 packets\.
bulk_bytes,17m TCA_PFIFO_BULK_BULK_BYTES \(bulk_bytes\) must be a u32 in 0\.\.16777216 bytes, 0 = no cap\.
bulk_pkts,65537 TCA_PFIFO_BULK_BULK_PKTS \(bulk_pkts\) must be a u32 in 0\.\.65536 packets, 0 = no cap, 1 = bulk off\.
EOF
check_eq "bad input changed nothing" "$(tc -j qdisc show dev $dev | jq -cS '.[0].options')" "$before"

# Rejections by the kernel: exit 2 and its message.
expect_fail "add over an existing pfifo_bulk" 2 'Error: Exclusivity flag on, cannot modify' \
	tc qdisc add dev $dev root pfifo_bulk limit 5
expect_fail "change where there is none" 2 'Error: Qdisc not found\. To create specify NLM_F_CREATE flag' \
	tc qdisc change dev $dev2 root pfifo_bulk limit 5
expect_fail "del where there is none" 2 'Error: Cannot delete qdisc with handle of zero' \
	tc qdisc del dev $dev2 root
check_eq "rejections changed nothing" "$(tc -j qdisc show dev $dev | jq -cS '.[0].options')" "$before"

# --- as a child: parent, effective_mode none, locked -----------------------------------------
check "prio root on $dev2" tc qdisc add dev $dev2 root handle 1: prio
check "pfifo_bulk under prio" tc qdisc add dev $dev2 parent 1:1 handle 10: pfifo_bulk limit 64
check_eq "child: handle, parent, options" \
	"$(tc -j qdisc show dev $dev2 | jq -c '.[] | select(.kind == "pfifo_bulk") | [.handle, .parent, .options.limit, .options.effective_mode, .options.lockless]')" \
	'["10:","1:1",64,"none",false]'
check "child text" eval 'tc qdisc show dev $dev2 | grep -q "^qdisc pfifo_bulk 10: parent 1:1 limit 64p .* effective_mode none locked *$"'
check "prio removed" tc qdisc del dev $dev2 root

# --- statistics after known traffic -------------------------------------------------------
# On a refnic device that is the bottleneck, so that a backlog forms and
# with it batches (a packet that finds the queue idle and empty is
# bypassed: the first one here).
sdev=pfbtc2
refnic_device_bound $sdev
check "fresh qdisc for stats" tc qdisc replace dev $sdev root handle 2: pfifo_bulk
sent=$(pkt_send $sdev 1000)
check_eq "frames sent" "$sent" 1000
check "the device went still" wait_tx_settled $sdev
# the order of the histogram's buckets is checked: jq, not gojq, which
# sorts keys (lib.sh)
stats=$(tc -s -j qdisc show dev $sdev | command jq -c '.[0]')
read -r packets bpkts bbytes bypassed batches hsum esum drops hkeys <<< "$(command jq -r \
	'[.packets, .batch_pkts, .batch_bytes, .bypassed, .batches, ([.batch_hist[]] | add),
	  (.end_bytes + .end_pkts + .end_budget + .end_empty), .drops,
	  (.batch_hist | keys_unsorted | join(","))] | @tsv' <<< "$stats")"
check_eq "packets" "$packets" 1000
check_eq "batch_pkts + bypassed = packets" "$((bpkts + bypassed))" 1000
check_eq "batch_bytes = 60 B per batch packet" "$bbytes" "$((60 * bpkts))"
check_cmp "batches" "$batches" '>=' 1
check_cmp "batches <= batch_pkts" "$batches" '<=' "$bpkts"
check_eq "histogram has 8 buckets" "$hkeys" "1,2,3-4,5-8,9-16,17-32,33-64,65+"
check_eq "histogram sums to batches" "$hsum" "$batches"
check_eq "end reasons sum to batches" "$esum" "$batches"
check_eq "no drops" "$drops" 0
check_eq "no mean_batch in JSON (derived; the text has it)" "$(jq 'has("mean_batch")' <<< "$stats")" false
# The text has the same numbers, in tc's layout.
want=$(command jq -r '"  batches \(.batches) batch_pkts \(.batch_pkts) batch_bytes \(.batch_bytes) mean_batch X",
	"  batch_hist " + ([.batch_hist | to_entries[] | "\(.key):\(.value)"] | join(" ")),
	"  end_bytes \(.end_bytes) end_pkts \(.end_pkts) end_budget \(.end_budget) end_empty \(.end_empty)",
	"  reschedules \(.reschedules) bypassed \(.bypassed)",
	"  held \(.held) release_pkts \(.release_pkts) release_timer \(.release_timer) sent_at_once \(.sent_at_once) held_ns \(.held_ns)ns held_ns_max \(.held_ns_max)ns"' <<< "$stats")
text=$(tc -s qdisc show dev $sdev)
check "tc -s text: xstats lines" \
	diff <(sed -e 's/ *$//' -e 's/mean_batch [0-9.]*/mean_batch X/' <<< "$text" | tail -n 5) - <<< "$want"
check_eq "tc -s text: mean_batch" "$(grep -o 'mean_batch [0-9.]*' <<< "$text")" \
	"mean_batch $(awk -v p="$bpkts" -v b="$batches" 'BEGIN { printf "%.2f", p / b }')"

keys='{batches, batch_pkts, batch_bytes, batch_hist, end_bytes, end_pkts, end_budget, end_empty, reschedules, bypassed}'
tcx=$(echo "$stats" | jq -cS "$keys")
check_eq "bulkctl -s -j xstats = tc's" "$("$BULKCTL" -s -j show $sdev | jq -cS ".[0] | $keys")" "$tcx"
check_eq "kernel dump xstats = tc's" "$(nl_dump $sdev | jq -cS ".[0].xstats | $keys")" "$tcx"
check_eq "bulkctl -s -j generic stats = tc's" \
	"$("$BULKCTL" -s -j show $sdev | jq -cS '.[0] | {bytes, packets, drops, overlimits, requeues, backlog, qlen}')" \
	"$(echo "$stats" | jq -cS '{bytes, packets, drops, overlimits, requeues, backlog, qlen}')"
check "bulkctl -s text = tc -s text, byte for byte" \
	diff <("$BULKCTL" -s show dev $sdev) <(tc -s qdisc show dev $sdev)
check "bulkctl -s -j = tc -s -j, byte for byte" \
	diff <("$BULKCTL" -s -j show dev $sdev) <(tc -s -j qdisc show dev $sdev)

check "del" tc qdisc del dev $sdev root
pfb_exit
