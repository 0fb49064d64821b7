#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A refnic pair carries real traffic between two network namespaces: frames
# a device sends arrive on its peer through the peer's NAPI poll. ping, a UDP
# burst and a TCP transfer (checked byte for byte) cross it, with two queues
# a side, and the counters add up: what one end sent the other received, and
# every sent frame completed. Each counter has one home: ethtool -S
# repeats none of ip -s link's, sysfs's or (6.9+) netdev netlink's qstats,
# which count queue by queue what ip -s link counts. A frame too long for
# the peer's MTU is dropped and counted. A peer brought up with the pair
# has no carrier while the other end is down. A user namespace cannot put
# the peer in a network namespace it has no CAP_NET_ADMIN in.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool python3 busybox jq
load_module refnic

a=rfpa0
b=rfpb0
ns=rfpns
check "pair with 2+2 queues, peer in a namespace" \
	refnic_pair $a $b $ns numtxqueues 2 numrxqueues 2
check_eq "kind" "$(ip -d -j link show $a | jq -r '.[0].linkinfo.info_kind')" refnic
check_eq "peer has 2 TX queues" "$(ip netns exec $ns ethtool -S $b | grep -c 'txq[0-9]*_tx_doorbells:')" 2
check "carrier on both ends" test "$(cat /sys/class/net/$a/carrier)" = 1
check "ping across" busybox ping -c 3 -W 2 -i 0.2 10.77.0.2

# wait_ready: until the receiver in the namespace has bound its socket.
wait_ready() {
	local i
	for i in $(seq 200); do
		[ -e /tmp/rfp_ready ] && break
		sleep 0.1
	done
	rm -f /tmp/rfp_ready
}

rm -f /tmp/rfp_ready
# UDP: 500 datagrams of 1000 bytes, all must arrive. Under TCG the receiver
# is slow: let its socket buffer hold them all.
old_rmem=$(sysctl -n net.core.rmem_max)
defer "sysctl -qw net.core.rmem_max=$old_rmem"
sysctl -qw net.core.rmem_max=$((8 << 20))
ip netns exec $ns python3 - <<'PY' &
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("10.77.0.2", 9999))
open("/tmp/rfp_ready", "w").close()
s.settimeout(10)
n = 0
try:
    while n < 500:
        s.recv(2000)
        n += 1
except OSError:
    pass
open("/tmp/rfp_udp", "w").write(str(n))
PY
udp_pid=$!
wait_ready
python3 - <<'PY'
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(500):
    s.sendto(bytes(1000), ("10.77.0.2", 9999))
    if i % 50 == 49:
        time.sleep(0.01)
PY
wait $udp_pid
check_eq "UDP: all datagrams received" "$(cat /tmp/rfp_udp)" 500

# TCP: 4 MB, SHA-256 compared on both sides.
ip netns exec $ns python3 - <<'PY' &
import hashlib, socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("10.77.0.2", 9998))
l.listen(1)
open("/tmp/rfp_ready", "w").close()
l.settimeout(20)
c, _ = l.accept()
h, n = hashlib.sha256(), 0
while True:
    d = c.recv(65536)
    if not d:
        break
    h.update(d)
    n += len(d)
open("/tmp/rfp_tcp", "w").write("%d %s" % (n, h.hexdigest()))
PY
tcp_pid=$!
wait_ready
# 120 s bounds a stuck connection, not a speed: sendall()'s timeout is for
# the whole 4 MB, and the KCSAN guest moved 3.4 MB in 20 s.
sent=$(python3 - <<'PY'
import hashlib, os, socket
data = os.urandom(4 << 20)
s = socket.create_connection(("10.77.0.2", 9998), timeout=120)
s.sendall(data)
s.close()
print(len(data), hashlib.sha256(data).hexdigest())
PY
)
wait $tcp_pid
check_eq "TCP: 4 MB arrive intact" "$(cat /tmp/rfp_tcp)" "$sent"
rm -f /tmp/rfp_udp /tmp/rfp_tcp

# pair_counters: both ends' counters (ip -s link) on one line: packets sent,
# packets received, bytes sent, bytes received, each of A then of B
pair_counters() {
	local s
	for s in tx_packets rx_packets tx_bytes rx_bytes; do
		echo -n "$(link_stat $a $s) $(refnic_link_stat $b $s $ns) "
	done
}

check "$a drained" refnic_quiesce $a
check "$b drained" refnic_quiesce $b $ns
# The sums come from one steady reading of all the counters, not from
# reads one after the other: a frame either end sends of its own after the
# traffic (an ARP probe, a FIN sent again) and between two such reads is
# counted on one end only (ci, 7.3 with a guest beside: B sent 92, A
# received 93).
counters=$(refnic_steady pair_counters)
check_eq "traffic over (the counters stood still for 0.2 s)" "$?" 0
read -r a_tx b_tx a_rx b_rx a_txb b_txb a_rxb b_rxb <<< "$counters"
check_eq "nothing dropped on $a" "$(link_stat $a rx_dropped)/$(link_stat $a tx_dropped)" 0/0
check_eq "nothing dropped on $b" \
	"$(refnic_link_stat $b rx_dropped $ns)/$(refnic_link_stat $b tx_dropped $ns)" 0/0
check_eq "$a sent = $b received" "$a_tx" "$b_rx"
check_eq "$b sent = $a received" "$b_tx" "$a_rx"
check_eq "$a bytes sent = $b bytes received" "$a_txb" "$b_rxb"
check_eq "$b bytes sent = $a bytes received" "$b_txb" "$a_rxb"
check "$a completions = packets" refnic_quiesce $a

# Each counter has one home (Documentation/networking/refnic.rst,
# "Counters"): the device's packets, bytes, drops and carrier errors in ip
# -s link, timeouts in sysfs, and from 6.9 a queue's packets, bytes, stops
# and wakes in netdev netlink's qstats; ethtool -S none of them. Before 6.9
# (no qstats) ethtool -S keeps the queues' packets, bytes, stops and wakes
# and the device's stops and wakes, which nothing else shows.
names=$(ethtool -S $a | awk -F: 'NR > 1 { gsub(/ /, "", $1); print $1 }')
check_eq "ethtool -S: never the device's packets, bytes, drops, errors, timeouts" \
	"$(grep -cE '^(rx_.*|tx_packets|tx_bytes|tx_dropped|tx_carrier_errors|(txq[0-9]+_)?tx_timeouts)$' <<< "$names")" 0
check_eq "ethtool -S: every queue's dropped and carrier errors" \
	"$(grep -cE '^txq[01]_tx_(dropped|carrier_errors)$' <<< "$names")" 4
check_eq "timeouts in sysfs, per queue" "$(refnic_timeouts $a)" 0
# A late frame (an ARP, a TCP retransmission) may still move the counters:
# compare a qstats read with the ip -s link read taken before and after it,
# the two the same (a few tries), and never with a later read.
for try in 1 2 3 4 5 6 7 8 9 10; do
	stats0=$(ip -j -s link show $a)
	qstats=$(python3 "$PFB_TESTDIR/pfb_qstats.py" $a 2>&1)
	qrc=$?
	qdevice=$(python3 "$PFB_TESTDIR/pfb_qstats.py" --device $a 2>&1)
	estats=$(ethtool -S $a)
	stats=$(ip -j -s link show $a)
	[ "$stats0" = "$stats" ] && break
	sleep 0.5
done
echo "# qstats of $a (try $try): $qstats"
check_eq "ip -s link read the same before and after qstats" "$stats" "$stats0"
# stats64 DIR FIELD: that counter of $a in the bracketing ip -s link read.
stats64() {
	echo "$stats" | jq ".[0].stats64.$1.$2"
}
if refnic_has_qstats; then
	check_eq "pfb_qstats.py reads them" "$qrc" 0
	check_eq "ethtool -S: no packets, bytes, stops, wakes (qstats has them)" \
		"$(grep -cE '^(txq[0-9]+_)?tx_(packets|bytes|stops|wakes)$' <<< "$names")" 0
	check_eq "qstats: 2 rx and 2 tx queues" \
		"$(echo "$qstats" | jq -c '[.[] | "\(.type)\(.id)"]')" '["rx0","rx1","tx0","tx1"]'
	for t in tx rx; do
		check_eq "qstats $t packets of both queues = ip -s link" \
			"$(echo "$qstats" | jq "[.[] | select(.type == \"$t\") | .packets] | add")" \
			"$(stats64 $t packets)"
		check_eq "qstats $t bytes of both queues = ip -s link" \
			"$(echo "$qstats" | jq "[.[] | select(.type == \"$t\") | .bytes] | add")" \
			"$(stats64 $t bytes)"
	done
	check_eq "qstats of the device = ip -s link (tx packets)" \
		"$(echo "$qdevice" | jq .tx.packets)" "$(stats64 tx packets)"
	check_eq "qstats: each TX queue reports stops and wakes" \
		"$(echo "$qstats" | jq '[.[] | select(.type == "tx") | .stop, .wake | numbers] | length')" 4
else
	check_eq "no qstats before 6.9 (pfb_qstats.py exit 2)" "$qrc" 2
	check_eq "ethtool -S: each queue's packets, bytes, stops, wakes" \
		"$(grep -cE '^txq[01]_tx_(packets|bytes|stops|wakes)$' <<< "$names")" 8
	check_eq "ethtool -S: the device's stops and wakes" \
		"$(grep -cE '^tx_(stops|wakes)$' <<< "$names")" 2
	check_eq "ethtool -S: per-queue packets add up to ip -s link" \
		"$(echo "$estats" | awk '$1 ~ /^txq[01]_tx_packets:$/ { n += $2 } END { print n }')" \
		"$(stats64 tx packets)"
fi
# 4 MB need 2873 segments at least (1460 bytes each at most at MTU 1500):
# counted in segments, as TSO (on by default) sends fewer, larger frames.
check_cmp "TCP went through $a (segments)" "$(ethtool_stat $a tx_segments)" ">=" 2873

# A frame longer than the peer's MTU allows is dropped by the peer and
# counted, as veth's forward path does: with $b at MTU 1000, 1200-byte
# pings from $a (MTU 1500) do not cross.
d0=$(refnic_link_stat $b rx_dropped $ns)
check "$b MTU 1000" ip -n $ns link set $b mtu 1000
check_fails "1200-byte pings do not cross" busybox ping -c 3 -W 1 -i 0.2 -s 1200 10.77.0.2
check_eq "$b dropped each (rx_dropped)" $(($(refnic_link_stat $b rx_dropped $ns) - d0)) 3
check "$b MTU 1500" ip -n $ns link set $b mtu 1500
check "1200-byte pings cross at MTU 1500" busybox ping -c 2 -W 2 -i 0.2 -s 1200 10.77.0.2

check "deleting one end deletes both" ip link del $a
check_fails "peer gone" ip -n $ns link show $b

# "peer name B up": B comes up with the pair, but has no carrier while
# this end is down, as with veth; both have it once this end is up.
c=rfpc0
d=rfpc1
check "pair with the peer up at creation" ip link add $c type refnic peer name $d up &&
	defer "ip link del $c"
check_eq "peer up, this end down: no carrier on the peer" \
	"$(cat /sys/class/net/$d/flags) $(cat /sys/class/net/$d/carrier)" "0x1003 0"
check "this end up" ip link set $c up
check_eq "both up: carrier on both" \
	"$(cat /sys/class/net/$c/carrier) $(cat /sys/class/net/$d/carrier)" "1 1"

# The peer's namespace needs CAP_NET_ADMIN there, as the device's own
# does: from a user namespace of its own, a pair inside its network
# namespace is made, one whose peer would go to ours (passed as an open
# file) is refused.
u0=rfpu0
u1=rfpu1
check "user namespace: a pair in its own network namespace" \
	unshare -Urn sh -c "ip link add $u0 type refnic peer name $u1 && ip link show $u1 > /dev/null"
exec {ourns}< /proc/self/ns/net
err=$(unshare -Urn ip link add $u0 type refnic peer name $u1 netns /proc/self/fd/$ourns 2>&1)
check_eq "user namespace: a peer in our namespace refused" "$?" 2
exec {ourns}<&-
check_eq "user namespace: why" "$err" \
	"Error: refnic: no CAP_NET_ADMIN in the peer's network namespace."
check_fails "user namespace: no peer left in our namespace" ip link show $u1
pfb_exit
