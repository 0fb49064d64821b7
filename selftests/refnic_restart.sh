#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A restart of refnic's datapath that cannot get memory changes nothing and
# hangs nothing. With every TX ring allocation failing (the debugfs knob
# fail_ring_alloc): ethtool -G and ethtool -L fail with ENOMEM and leave the
# ring size, the channels and the datapath as they were; the BQL switch
# (debugfs), which needs no new memory, changes; ip link set up fails and
# leaves the link down. Traffic crosses the pair after each step, and link
# down, up and delete complete. (A restart that failed used to leave the
# device up with NAPI disabled: the next down looped for ever in
# napi_disable() under RTNL.)

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool busybox
load_module refnic

a=rfra0
b=rfrb0
ns=rfrns
REFNIC_ERR=/tmp/refnic_restart.err
err=$REFNIC_ERR
defer "rm -f $err"
exec 3>&1	# the checks' own output, which check_fails silences

# enomem WHAT: the last refnic_bounded command failed for want of memory.
enomem() {
	check "$1 fails with ENOMEM" grep -qi "cannot allocate" "$err"
}

ping_across() {
	busybox ping -c 2 -W 2 -i 0.2 10.77.0.2 >/dev/null
}

ring() {
	ethtool -g $a | awk '/^TX:/ { v = $2 } END { print v }'
}

channels() {
	ethtool -l $a | awk '/^Current/ { c = 1 } c && /^(RX|TX):/ { printf "%s%s ", $1, $2 }'
}

check "pair with 2+2 queues" refnic_pair $a $b $ns numtxqueues 2 numrxqueues 2
fail=$(refnic_dbg $a fail_ring_alloc)
[ -w "$fail" ] || { echo "SKIP: no $fail"; exit $ksft_skip; }
check "ping across" ping_across
check_fails "fail_ring_alloc refuses 2" sh -c "echo 2 > $fail"
check_eq "fail_ring_alloc still 0" "$(cat "$fail")" 0
ch0=$(channels)

check "every ring allocation fails from now on" sh -c "echo 1 > $fail"
check_fails "ethtool -G tx 512 refused" refnic_bounded ethtool -G $a tx 512
enomem "ethtool -G"
check_eq "ring size unchanged" "$(ring)" 256
check "ping across after the failed -G" ping_across

check_fails "ethtool -L tx 1 refused" refnic_bounded ethtool -L $a tx 1
enomem "ethtool -L"
check_eq "channels unchanged" "$(channels)" "$ch0"
check "ping across after the failed -L" ping_across

check "BQL off (no new memory needed)" refnic_bounded refnic_bql $a off
check_eq "BQL switch reads off" "$(refnic_bql $a)" off
check "ping across with BQL off" ping_across

check "link down" refnic_bounded ip link set $a down
check_fails "link up refused" refnic_bounded ip link set $a up
enomem "ip link set up"
check_fails "link stays down" eval 'ip link show $a | grep -q "[<,]UP[,>]"'
check "link down again (nothing to stop)" refnic_bounded ip link set $a down

check "ring allocations work again" sh -c "echo 0 > $fail"
check "link up" refnic_bounded ip link set $a up
check "ping across after up" ping_across
check_eq "ring size still 256" "$(ring)" 256
check_eq "channels still the same" "$(channels)" "$ch0"
check "ethtool -G tx 512 now works" refnic_bounded ethtool -G $a tx 512
check_eq "ring size 512" "$(ring)" 512
# The RX side has no ring to size: ethtool -g says n/a (maximum and current),
# and the core refuses -G rx with its reason.
check_eq "ethtool -g: no RX ring (n/a)" "$(ethtool -g $a | awk '/^RX:/ { print $2 }' | sort -u)" "n/a"
check_fails "ethtool -G rx 512 refused" ethtool -G $a rx 512
check "ethtool -G rx says why" eval "ethtool -G $a rx 512 2>&1 | grep -q 'exceeds maximum'"
check_eq "ring size still 512 after -G rx" "$(ring)" 512
check "ping across after -G" ping_across
check "$a drained" refnic_quiesce $a
check_eq "every frame $a took accounted for" "$(refnic_wait_accounted $a $b $ns)" 0
check_eq "every frame $b took accounted for" "$(refnic_wait_accounted $b $a "" $ns)" 0

check "link down, then delete" refnic_bounded ip link set $a down
check "delete the pair" refnic_bounded ip link del $a
check_fails "peer gone" ip -n $ns link show $b
pfb_exit
