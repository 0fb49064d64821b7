#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A refnic pair carries real traffic between two network namespaces: frames
# a device sends arrive on its peer through the peer's NAPI poll. ping, a UDP
# burst and a TCP transfer (checked byte for byte) cross it, with two queues
# a side, and the counters add up: what one end sent the other received, and
# every sent frame completed, queue by queue in netdev netlink's qstats
# (6.9+) as in ethtool -S. A frame too long for the peer's MTU is
# dropped and counted. A peer brought up with the pair has no carrier
# while the other end is down.

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
check_eq "peer has 2 TX queues" "$(ip netns exec $ns ethtool -S $b | grep -c 'txq[0-9]*_tx_packets:')" 2
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
sent=$(python3 - <<'PY'
import hashlib, os, socket
data = os.urandom(4 << 20)
s = socket.create_connection(("10.77.0.2", 9998), timeout=20)
s.sendall(data)
s.close()
print(len(data), hashlib.sha256(data).hexdigest())
PY
)
wait $tcp_pid
check_eq "TCP: 4 MB arrive intact" "$(cat /tmp/rfp_tcp)" "$sent"
rm -f /tmp/rfp_udp /tmp/rfp_tcp

# pair_counters: both ends' packet counters, one line
pair_counters() {
	echo "$(ethtool_stat $a tx_packets) $(ethtool_stat $a rx_packets)" \
	     "$(refnic_stat $b tx_packets $ns) $(refnic_stat $b rx_packets $ns)"
}
# pair_settled: the counters stopped moving (a late ACK or FIN sent between
# two reads would otherwise look like a lost or an invented frame)
pair_settled() {
	local c0 c1 i
	c1=$(pair_counters)
	for i in $(seq 20); do
		sleep 0.2
		c0=$c1 c1=$(pair_counters)
		[ "$c0" = "$c1" ] && return 0
	done
	return 1
}

check "$a drained" refnic_quiesce $a
check "$b drained" refnic_quiesce $b $ns
check "traffic over" pair_settled
check_eq "nothing dropped on $a" "$(ethtool_stat $a rx_dropped)/$(ethtool_stat $a tx_dropped)" 0/0
check_eq "nothing dropped on $b" "$(refnic_stat $b rx_dropped $ns)/$(refnic_stat $b tx_dropped $ns)" 0/0
check_eq "$a sent = $b received" "$(ethtool_stat $a tx_packets)" "$(refnic_stat $b rx_packets $ns)"
check_eq "$b sent = $a received" "$(refnic_stat $b tx_packets $ns)" "$(ethtool_stat $a rx_packets)"
check_eq "$a bytes sent = $b bytes received" "$(ethtool_stat $a tx_bytes)" "$(refnic_stat $b rx_bytes $ns)"
check "$a completions = packets" refnic_quiesce $a
check_eq "$a per-queue packets add up" \
	$(($(ethtool_stat $a txq0_tx_packets) + $(ethtool_stat $a txq1_tx_packets))) \
	"$(ethtool_stat $a tx_packets)"
check_eq "stats64 rx = ethtool rx" "$(link_stat $a rx_packets)" "$(ethtool_stat $a rx_packets)"
# Per-queue statistics through netdev netlink (6.9+, netdev_stat_ops): the
# counters of ethtool -S, queue by queue. Before 6.9 there is no such command.
# A late frame (ARP) may still move the counters: compare a qstats read with
# ethtool -S taken before and after it, the same (a few tries).
for try in 1 2 3 4 5 6 7 8 9 10; do
	stats0=$(ethtool -S $a)
	qstats=$(python3 "$PFB_TESTDIR/pfb_qstats.py" $a 2>&1)
	qrc=$?
	stats=$(ethtool -S $a)
	[ "$stats0" = "$stats" ] && break
	sleep 0.5
done
echo "# qstats of $a (try $try): $qstats"
stat_of() {
	echo "$stats" | awk -v k="$1:" '$1 == k { print $2; exit }'
}
if [ "$(printf '%s\n' 6.9 "$(uname -r)" | sort -V | head -n1)" = 6.9 ]; then
	check_eq "pfb_qstats.py reads them" "$qrc" 0
	for i in 0 1; do
		check_eq "qstats txq$i packets bytes stop wake = ethtool -S" \
			"$(echo "$qstats" | jq -r ".[] | select(.type == \"tx\" and .id == $i) |
				\"\\(.packets) \\(.bytes) \\(.stop) \\(.wake)\"")" \
			"$(for k in tx_packets tx_bytes tx_stops tx_wakes; do
				stat_of txq${i}_$k; done | xargs)"
	done
	check_eq "qstats rx packets of both queues = ethtool rx_packets" \
		"$(echo "$qstats" | jq '[.[] | select(.type == "rx") | .packets] | add')" \
		"$(stat_of rx_packets)"
	check_eq "qstats: 2 rx and 2 tx queues" \
		"$(echo "$qstats" | jq -c '[.[] | "\(.type)\(.id)"]')" '["rx0","rx1","tx0","tx1"]'
else
	check_eq "no qstats before 6.9 (pfb_qstats.py exit 2)" "$qrc" 2
fi
check_cmp "TCP went through $a (packets)" "$(ethtool_stat $a tx_packets)" ">" 1000

# A frame longer than the peer's MTU allows is dropped by the peer and
# counted, as veth's forward path does: with $b at MTU 1000, 1200-byte
# pings from $a (MTU 1500) do not cross.
d0=$(refnic_stat $b rx_dropped $ns)
check "$b MTU 1000" ip -n $ns link set $b mtu 1000
check_fails "1200-byte pings do not cross" busybox ping -c 3 -W 1 -i 0.2 -s 1200 10.77.0.2
check_eq "$b dropped each (rx_dropped)" $(($(refnic_stat $b rx_dropped $ns) - d0)) 3
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
pfb_exit
