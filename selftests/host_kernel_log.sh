#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side check of tools/vm/check-kernel-log, the judge of every VM test's
# kernel log, on canned logs: kernel reports fail, a clean log passes, and a
# KCSAN report is ours exactly when the stack of a plain (unmarked) access
# or of an assertion has a frame in sch_pfifo_bulk or refnic. The first
# canned race is the one KCSAN found on 6.12.118-pfb-kcsan in
# pfifo_bulk_order.sh: refnic_poll's netif_tx_wake_queue (marked) against
# the core's plain read of the queue's state; the core's, and listed.
#
#   selftests/host_kernel_log.sh

. "$(dirname "$0")/lib.sh"

ckl=$PFB_TOP/tools/vm/check-kernel-log
tmp=$(mktemp -d)
defer "rm -rf $tmp"

# kcsan TITLE ACCESS FRAMES ACCESS FRAMES [TAIL]: a KCSAN report as the
# kernel prints it, frames separated by ";"; TAIL is what follows the
# stacks (locks held, irq stamps), ";"-separated too.
kcsan() {
	local IFS=';' f
	echo "[  205.895497] BUG: KCSAN: $1"
	echo "[  205.895498] "
	echo "[  205.900303] $2 to 0xffff888005213550 of 8 bytes by interrupt on cpu 0:"
	for f in $3; do echo "[  205.900763]  $f"; done
	echo "[  205.905600] "
	echo "[  205.905622] $4 to 0xffff888005213550 of 8 bytes by task 174 on cpu 3:"
	for f in $5; do echo "[  205.908192]  $f"; done
	echo "[  205.909500] "
	for f in ${6:-}; do echo "[  205.909598] $f"; done
	echo "[  205.917407] value changed: 0x0000000000000001 -> 0x0000000000000000"
	echo "[  205.920250] Reported by Kernel Concurrency Sanitizer on:"
	echo "[  205.920950] CPU: 3 UID: 0 PID: 174 Comm: kpktgend_3 Not tainted 6.12.118-pfb-kcsan #1"
	echo "[  205.921613] =================================================================="
}

# verdict NAME: check-kernel-log on $tmp/NAME; prints its exit status and
# what it listed as not ours.
verdict() {
	local rc
	"$ckl" "$tmp/$1" > "$tmp/$1.out" 2> "$tmp/$1.err"
	rc=$?
	echo "$rc $(sed 's/^kcsan, not ours: //' "$tmp/$1.err")"
}

core_wake='netif_tx_wake_queue+0x1a/0x1c0;refnic_poll+0x719/0x770 [refnic];__napi_poll.constprop.0+0x57/0x280;net_rx_action+0x30b/0x6e0'
core_read='__qdisc_run+0x572/0xb10;__dev_queue_xmit+0x112f/0x1620;pktgen_xmit+0x1c4c/0x1fe0 [pktgen]'
held='3 locks held by kpktgend_3/174:; #2: ffff8880056f2908 (&sch->root_lock_key#3){+.-.}-{2:2}, at: pfb_dequeue+0x968/0xb10 [sch_pfifo_bulk];softirqs last disabled at (658809): [<ffffffffa001c869>] refnic_poll+0x1959/0x1fe0 [refnic]'

kcsan "data-race in __qdisc_run / netif_tx_wake_queue" \
	"read-write (marked)" "$core_wake" read "$core_read" > "$tmp/core"
check_eq "core race, our driver on its marked side: listed, not a failure" \
	"$(verdict core)" "0 data-race in __qdisc_run / netif_tx_wake_queue"

kcsan "data-race in __qdisc_run / netif_tx_wake_queue" \
	"read-write (marked)" "$core_wake" read "$core_read" "$held" > "$tmp/core-held"
check_eq "our lock held and our function in the irq stamps: still the core's" \
	"$(verdict core-held)" "0 data-race in __qdisc_run / netif_tx_wake_queue"

sed 's/^/# kernel: /; s/$/\r/' "$tmp/core" > "$tmp/core-console"
check_eq "prefixed console lines with CR: the same verdict" \
	"$(verdict core-console)" "0 data-race in __qdisc_run / netif_tx_wake_queue"

# 7.3.4-pfb-kcsan, the quick soak: BQL's completion in refnic_poll calls
# netif_schedule_queue(), which tests the stop bits unlocked, while our
# xmit stops the queue (set_bit)
kcsan "data-race in netif_schedule_queue / refnic_start_xmit [refnic]" \
	"write (marked)" "refnic_start_xmit+0xd7b/0xec0 [refnic];dev_hard_start_xmit+0x127/0x3d0" \
	read "netif_schedule_queue+0x42/0x1a0;refnic_poll+0x6cc/0x790 [refnic];__napi_poll.constprop.0+0x52/0x380" \
	> "$tmp/core-schedule"
check_eq "the core's unlocked test of the stop bits, from our BQL completion: listed" \
	"$(verdict core-schedule)" "0 data-race in netif_schedule_queue / refnic_start_xmit [refnic]"

kcsan "data-race in pfb_dump / pfb_enqueue" \
	write "pfb_enqueue+0x2a/0x300 [sch_pfifo_bulk];__dev_queue_xmit+0x112f/0x1620" \
	read "pfb_dump+0x90/0x400 [sch_pfifo_bulk];tc_fill_qdisc+0x1c0/0x4c0" > "$tmp/ours"
check_eq "plain accesses in our qdisc: a failure" "$(verdict ours)" "1 "
check "our report is printed whole" \
	eval "grep -q 'BUG: KCSAN: data-race in pfb_dump' $tmp/ours.out && grep -q 'pfb_dump+0x90' $tmp/ours.out"

kcsan "data-race in __skb_queue_tail / skb_dequeue" \
	write "__skb_queue_tail+0x12/0x40;pfb_enqueue+0x2a/0x300 [sch_pfifo_bulk];__dev_queue_xmit+0x112f/0x1620" \
	"read (marked)" "skb_dequeue+0x20/0x90;net_rx_action+0x30b/0x6e0" > "$tmp/ours-deep"
check_eq "a core helper's plain access called from our qdisc: a failure" \
	"$(verdict ours-deep)" "1 "

kcsan "data-race in refnic_xmit / netif_tx_stop_queue" \
	"read (marked, reordered)" "netif_tx_stop_queue+0x10/0x30;sch_direct_xmit+0x80/0x300" \
	read "refnic_xmit+0x200/0x600 [refnic];dev_hard_start_xmit+0x90/0x200" > "$tmp/ours-driver"
check_eq "a plain read in our driver against a marked write: a failure" \
	"$(verdict ours-driver)" "1 "

{
	echo "[   12.000001] BUG: KCSAN: data-race in refnic_poll+0x88/0x770 [refnic]"
	echo "[   12.000002] "
	echo "[   12.000003] race at unknown origin, with read to 0xffff888005213550 of 4 bytes by interrupt on cpu 1:"
	echo "[   12.000004]  refnic_poll+0x88/0x770 [refnic]"
	echo "[   12.000005] =================================================================="
} > "$tmp/unknown"
check_eq "race at unknown origin, plain read in our driver: a failure" "$(verdict unknown)" "1 "

kcsan "assert: race in refnic_ring_reap / netif_tx_wake_queue" \
	"assert no writes" "refnic_ring_reap+0x30/0x200 [refnic];refnic_poll+0x719/0x770 [refnic]" \
	"read-write (marked)" "$core_wake" > "$tmp/assert"
check_eq "our ASSERT_EXCLUSIVE_WRITER broken: a failure" "$(verdict assert)" "1 "

head -n 8 "$tmp/core" > "$tmp/cut"
check_eq "a report cut short (the guest stopped): a failure" "$(verdict cut)" "1 "

{
	echo "[    0.900000] kmemleak: Kernel memory leak detector initialized (mem pool available: 15722)"
	echo "[    1.000000] sch_pfifo_bulk: loaded"
} > "$tmp/clean"
check_eq "a clean log with kmemleak's start-up line: passes" "$(verdict clean)" "0 "

for r in "WARNING: CPU: 1 PID: 9 at net/sched/sch_generic.c:526 dev_watchdog+0x1e0/0x200" \
	 "refcount_t: underflow; use-after-free." \
	 "BUG: KASAN: slab-use-after-free in pfb_dequeue+0x40/0x300 [sch_pfifo_bulk]" \
	 "unreferenced object 0xffff888005213550 (size 256):" \
	 "NETDEV WATCHDOG: sk1a (refnic): transmit queue 0 timed out 5000 ms"; do
	printf '[    2.000000] %s\n' "$r" > "$tmp/report"
	check_eq "fails on: ${r%%:*}" "$(verdict report)" "1 "
done

check_fails "an unreadable log fails" "$ckl" "$tmp/none"

pfb_exit
