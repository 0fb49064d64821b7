#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk runs the path it reports, whoever made it, and never stalls
# when the path changes under load.
#
# 1. net.core.default_qdisc=pfifo_bulk on a refnic without BQL: the core
#    attaches the qdisc itself and sets TCQ_F_ONETXQUEUE after ->init; the
#    qdisc must still run the NOBQL path it reports, so that batches form:
#    mean batch > 1 (xstats), doorbells per packet < 1 (refnic).
# 2. "tc qdisc del dev X root" of another root qdisc: the core attaches a
#    new default qdisc; the same holds for it.
# 3. Under senders on every CPU and a sender that bypasses the qdisc on the
#    same queue (pktgen start_xmit), the mode, the caps, BQL and the ring
#    change every few hundred milliseconds. Then the test only watches the
#    device's tx_packets (sysfs) until they stop moving, never the qdisc (a
#    dump of an old qdisc could reschedule it and hide a stall), and reads
#    the qdisc once: backlog 0, and every offered packet sent or dropped.
#
# No kprobe, no tracepoint: it may run on multi-threaded TCG.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_trace.sh"
. "$(dirname "$0")/lib_refnic.sh"
. "$(dirname "$0")/lib_userspace.sh"
require_root
require_cmd jq python3 ethtool
load_module sch_pfifo_bulk
load_module refnic

dev=pfbpath0
mac=02:00:00:00:00:01

qd() {
	$PFB_NL dump $dev | jq -c '[.[] | select(.parent == "root")][0]'
}

# batch_load NAME: one flow per CPU through the root qdisc, 1500 packets
# each; then the qdisc has drained, its mean batch is above 1 and refnic
# rang fewer doorbells than it sent packets.
batch_load() {
	local name=$1 db0 tx0 db tx x
	db0=$(ethtool_stat $dev tx_doorbells)
	tx0=$(link_stat $dev tx_packets)
	pktgen_setup $dev $mac 1500
	pktgen_run
	check "$name: drained to backlog 0 (no stall)" wait_backlog_zero $dev
	db=$(($(ethtool_stat $dev tx_doorbells) - db0))
	tx=$(($(link_stat $dev tx_packets) - tx0))
	x=$(qd)
	echo "# $name: $(jq -r '"\(.kind) \(.handle): effective_mode \(.options.effective_mode), sent \(.packets), dropped \(.drops), requeues \(.requeues), batches \(.xstats.batches), hist \(.xstats.hist | tostring)"' <<< "$x"), doorbells $db for $tx frames"
	check_eq "$name: the root is pfifo_bulk" "$(jq -r .kind <<< "$x")" pfifo_bulk
	check_eq "$name: it reports the nobql path" "$(jq -r .options.effective_mode <<< "$x")" nobql
	check_cmp "$name: mean batch (xstats)" \
		"$(jq '.xstats.batch_pkts / .xstats.batches' <<< "$x")" ">" 1.5
	check_cmp "$name: doorbells per packet (refnic)" \
		"$(awk -v d=$db -v t=$tx 'BEGIN { printf "%.3f", t ? d / t : 1 }')" "<" 0.8
}

# --- 1 and 2: the default qdisc ----------------------------------------------
old_default=$(sysctl -n net.core.default_qdisc)
defer "sysctl -qw net.core.default_qdisc=$old_default"
must sysctl -qw net.core.default_qdisc=pfifo_bulk
must ip link add $dev type refnic
defer "ip link del $dev"
sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
# 2 Mb/s with coalesced completions and a short ring: the device is the
# bottleneck, so the qdisc holds a backlog and batches can form.
must refnic_bql $dev off
must ethtool -G $dev tx 64
must ethtool -s $dev speed 2
must ethtool -C $dev tx-usecs 10000 tx-frames 16
must ip link set $dev up
# lockless or locked: the mode the module was loaded with (lib.sh)
check_eq "default qdisc on a 1-queue device" "$(qd | jq -r '[.kind, .options.lockless] | @tsv')" \
	"$(printf 'pfifo_bulk\t%s' "$(qdisc_lockless)")"
batch_load "default qdisc, no BQL"

must tc qdisc replace dev $dev root handle 1: pfifo
must tc qdisc del dev $dev root
check_eq "tc qdisc del root: a new default qdisc" "$(qd | jq -r .kind)" pfifo_bulk
batch_load "re-attached default qdisc, no BQL"

# --- 3: path changes under load, watched without touching the qdisc ---------
must $PFB_NL replace $dev -H 1: limit 500 bulk_pkts 8
must refnic_bql $dev on

# Queue_xmit flows on every CPU, count 0 (until stopped), paced so that the
# changes themselves still get CPU time, and one start_xmit flow on CPU 0
# that reaches the driver without the qdisc, so that the driver's BQL count
# can move while the core collects a batch.
must pktgen_flows $dev $mac 0 2 60 200 60 1000
for f in "$PG/$dev"@*; do
	must pg_set "${f##*/}" "delay 100000"
done
pgx=$dev@99
must pg_set kpktgend_0 "add_device $pgx"
for kv in "count 0" "pkt_size 60" "delay 1000000" "dst 198.51.100.2" "dst_mac $mac"; do
	must pg_set $pgx "$kv"
done
t0=$SECONDS
pg_set pgctrl start &
pg_pid=$!
defer "kill $pg_pid"
q="tc qdisc change dev $dev root pfifo_bulk"
steps=(
	"$q mode nobql"
	"refnic_bql $dev off"
	"$q bulk_pkts 1"
	"$q mode bql bulk_pkts 4"
	"refnic_bql $dev on"
	"$q mode auto bulk_bytes 300 bulk_pkts 0"
	"ethtool -G $dev tx 256"
	"$q mode nobql bulk_pkts 9"
	"ethtool -s $dev speed 0"
	"$q mode auto bulk_bytes 0 bulk_pkts 8"
	"ethtool -s $dev speed 2"
	"refnic_bql $dev off"
	"$q mode bql"
	"ethtool -G $dev tx 64"
	"$q mode auto"
	"refnic_bql $dev on"
)
# The steps are paced, not timed: a slow guest takes longer over each,
# with the load running throughout (the bypassing sender's 1 ms pace gives
# it thousands of frames over the 16 steps, one is enough).
failed_steps=0
for step in "${steps[@]}"; do
	sleep 0.3
	$step > /dev/null 2>&1 || { echo "# step failed: $step"; failed_steps=$((failed_steps + 1)); }
done
check_eq "every change under load was accepted" "$failed_steps" 0
sleep 0.3
echo stop > $PG/pgctrl
wait $pg_pid
check "drained: tx_packets stopped moving (sysfs only)" wait_tx_settled $dev
x=$(qd)
offered=0
for f in "$PG/$dev"@*; do
	[ "$f" = "$PG/$pgx" ] && continue
	offered=$((offered + $(sed -n 's/.*pkts-sofar: *\([0-9]*\) *errors: *\([0-9]*\).*/\1 + \2/p' "$f")))
done
echo "# path changes ($((SECONDS - t0)) s): $(jq -r '"sent \(.packets), dropped \(.drops), requeues \(.requeues), qlen \(.qlen), reschedules \(.xstats.reschedules), ends bytes/pkts/budget/empty \(.xstats | "\(.end_bytes)/\(.end_pkts)/\(.end_budget)/\(.end_empty)")"' <<< "$x"), offered $offered"
check_eq "path changes: backlog 0 once tx stopped (no stall)" "$(jq -c '[.qlen, .backlog]' <<< "$x")" "[0,0]"
check_eq "path changes: offered == sent + dropped" "$offered" \
	"$(($(jq .packets <<< "$x") + $(jq .drops <<< "$x")))"
check_cmp "path changes: the bypassing sender sent" \
	"$(sed -n 's/.*pkts-sofar: *\([0-9]*\).*/\1/p' "$PG/$pgx")" ">" 0
pfb_exit
