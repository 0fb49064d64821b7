#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk options over rtnetlink (pfb_nl.py, no tc plugin needed): the
# defaults, a round trip of every option, partial changes, every bad value
# rejected with an extack message that names the attribute and its range
# while nothing changes, the effective mode, a multiqueue root warning, the
# xstats nest, and the module alias used for autoloading.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
require_root
require_cmd jq python3
load_module sch_pfifo_bulk
# a root runs in the mode the module was loaded with (lib.sh)
lockless=$(qdisc_lockless)

dev=pfbnl0
ip link add $dev type dummy || { echo "SKIP: no dummy"; exit $ksft_skip; }
defer "ip link del $dev"
ip link set $dev up

# keys sorted (-S), as gojq always sorts them (lib.sh)
opts() {
	$PFB_NL dump $dev | jq -cS '[.[] | select(.kind == "pfifo_bulk")][0].options'
}

check "add with defaults" $PFB_NL add $dev -H 1:
txql=$(cat /sys/class/net/$dev/tx_queue_len)
check_eq "default options" "$(opts | jq -cS 'del(.effective_mode)')" \
	"{\"bulk_bytes\":0,\"bulk_pkts\":0,\"coalesce_pkts\":8,\"coalesce_usecs\":0,\"limit\":$txql,\"lockless\":$lockless,\"mode\":\"auto\"}"
check "effective mode is bql or nobql" \
	eval "opts | jq -e '.effective_mode == \"bql\" or .effective_mode == \"nobql\"'"
check "tc shows the kind" eval "tc qdisc show dev $dev | grep -q \"^qdisc pfifo_bulk 1: root\""

check "change every option" $PFB_NL change $dev limit 77 bulk_bytes 3000 bulk_pkts 8 mode nobql
check_eq "round trip" "$(opts)" \
	'{"bulk_bytes":3000,"bulk_pkts":8,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":77,"lockless":'"$lockless"',"mode":"nobql"}'
check "change one option" $PFB_NL change $dev bulk_pkts 4
check_eq "others kept" "$(opts)" \
	'{"bulk_bytes":3000,"bulk_pkts":4,"coalesce_pkts":8,"coalesce_usecs":0,"effective_mode":"nobql","limit":77,"lockless":'"$lockless"',"mode":"nobql"}'
check "mode bql" $PFB_NL change $dev mode bql
check_eq "forced bql is effective" "$(opts | jq -r .effective_mode)" bql
check "nest without NLA_F_NESTED" \
	eval '! $PFB_NL change $dev --no-nested-flag limit 78 2> /tmp/pfb-nest.$$'
check "nest without NLA_F_NESTED: message" grep -q "NLA_F_NESTED is missing" /tmp/pfb-nest.$$
rm -f /tmp/pfb-nest.$$
check_eq "nest without NLA_F_NESTED: nothing changed" "$(opts | jq -r .limit)" 77
check "empty options change nothing" $PFB_NL change $dev --empty-options
before=$(opts)

# bad_value DESC REGEX ARGS...: rejected with a matching message (that
# nothing changed is checked once after all of them: each one must fail)
bad_value() {
	local what=$1 re=$2 err
	shift 2
	err=$($PFB_NL change $dev "$@" 2>&1)
	check "$what: rejected" test $? -ne 0
	check "$what: message '$err'" eval 'echo "$err" | grep -qE -- "$re"'
}
bad_value "limit 0" 'LIMIT \(limit\).*1\.\.16777216' limit 0
bad_value "limit too big" 'LIMIT \(limit\).*1\.\.16777216' limit 16777217
bad_value "bulk_bytes too big" 'BULK_BYTES \(bulk_bytes\).*0\.\.16777216' bulk_bytes 16777217
bad_value "bulk_pkts too big" 'BULK_PKTS \(bulk_pkts\).*0\.\.65536' bulk_pkts 65537
bad_value "mode 3" 'MODE \(mode\).*0\.\.2' mode 3
bad_value "good limit with bad bulk_pkts" 'BULK_PKTS' limit 5 bulk_pkts 70000
bad_value "effective_mode is read-only" 'EFFECTIVE_MODE.*read-only' effective_mode 1
bad_value "limit as u8" 'LIMIT \(limit\).*u32' -a 1:u8:5
bad_value "mode as u32" 'MODE \(mode\).*u8' -a 4:u32:1
bad_value "unknown attribute" 'unknown attribute.*1\.\.4' -a 99:u32:1
bad_value "attribute type 0" 'unknown attribute' -a 0:u32:1
check_eq "rejected changes changed nothing" "$(opts)" "$before"

check_fails "add with a bad value" $PFB_NL add $dev -H 2: -p root bulk_pkts 99999
check_eq "first qdisc still there" "$(opts)" "$before"
check "delete" tc qdisc del dev $dev root
check_fails "add with a bad value creates nothing" $PFB_NL add $dev -H 1: bulk_pkts 99999
check_eq "no pfifo_bulk left" "$(tc -j qdisc show dev $dev | jq '[.[] | select(.kind == "pfifo_bulk")] | length')" 0

check "tx_queue_len 0" ip link set $dev txqueuelen 0
tc qdisc add dev $dev root handle 1: pfifo
pfifo_limit=$(tc qdisc show dev $dev | sed -n 's/.* limit \([0-9]*\)p.*/\1/p')
tc qdisc del dev $dev root
check "add on tx_queue_len 0" $PFB_NL add $dev -H 1:
check_eq "default limit as pfifo's" "$(opts | jq -r .limit)" "$pfifo_limit"
# in the kernel's order: jq, not gojq, which sorts keys (lib.sh)
check_eq "xstats keys" "$($PFB_NL xstats $dev | command jq -c 'keys_unsorted')" \
	'["batches","batch_pkts","batch_bytes","hist","end_bytes","end_pkts","end_budget","end_empty","reschedules","bypassed","held","release_pkts","release_timer","sent_at_once","held_ns","held_ns_max"]'
check_eq "histogram buckets" "$($PFB_NL xstats $dev | command jq -c '.hist | keys_unsorted')" \
	'["1","2","3-4","5-8","9-16","17-32","33-64","65+"]'
tc qdisc del dev $dev root

mq=pfbnl1
ip link add $mq numtxqueues 4 numrxqueues 4 type dummy
defer "ip link del $mq"
ip link set $mq up
warn=$($PFB_NL add $mq -H 1: bulk_pkts 8 mode bql 2>&1)
check "root of a multiqueue device: added" test $? -eq 0
check "multiqueue root: warning '$warn'" eval 'echo "$warn" | grep -q "warning:.*multiqueue"'
check_eq "multiqueue root: nobql path" \
	"$($PFB_NL dump $mq | jq -r '.[0].options.effective_mode')" nobql
mq_root=$($PFB_NL dump $mq | jq -c '.[0].options')
check "mq root" tc qdisc replace dev $mq root handle 2: mq
check "pfifo_bulk as mq child" $PFB_NL replace $mq -p 2:1 -H 21: bulk_pkts 8
check_eq "mq child runs batches" \
	"$($PFB_NL dump $mq | jq -r '[.[] | select(.handle == "21:")][0].options.effective_mode')" nobql
check_eq "mq child added by netlink runs locked (qdisc_graft under mq)" \
	"$($PFB_NL dump $mq | jq -r '[.[] | select(.handle == "21:")][0].options.lockless')" false
check_eq "root of a multiqueue device before: the module's mode" "$(echo "$mq_root" | jq -r .lockless)" "$lockless"

check_eq "module alias for autoload" \
	"$(modinfo -F alias "$(module_file sch_pfifo_bulk)")" net-sch-pfifo_bulk
pfb_exit
