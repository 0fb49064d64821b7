#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# refnic offers a real NIC's offloads (scatter-gather, checksum, TSO for
# IPv4 and IPv6), switchable with ethtool -K. A TCP transfer across a
# refnic pair, checked byte for byte:
#  - TSO on (the default), IPv4 and IPv6: the driver gets GSO frames, more
#    segments than packets (tx_segments > tx_packets), and the segments
#    carry at least the data at one MSS each; the doorbell histograms of
#    packets and of segments count every doorbell once each, and per
#    doorbell there are at least as many segments as packets; the peer
#    receives each frame whole (its rx_packets = our tx_packets), with no
#    TCP checksum error, and BQL, charged skb->len, drains to 0;
#  - "ethtool -K tso off sg off tx off": ethtool -k says so, the stack
#    segments and checksums in software, and every frame is one segment
#    (segments = packets, the two histograms equal, bucket by bucket);
#  - the core keeps TSO off while SG is off and restores it with SG; back
#    on, GSO frames reach the driver again.
# A driver that counts a TSO frame as one segment, or a peer that takes a
# CHECKSUM_PARTIAL frame as unchecksummed, fails.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_refnic.sh"
require_root
require_cmd ethtool python3
load_module refnic

a=rftso0
b=rftso1
ns=rftsons
bytes=$((4 << 20))

check "pair, peer in a namespace" refnic_pair $a $b $ns || pfb_exit
# IPv6 for TSO6, without link-local addresses or DAD: no chatter.
ip link set $a addrgenmode none &&
ip -n $ns link set $b addrgenmode none &&
sysctl -qw net.ipv6.conf.$a.disable_ipv6=0 &&
ip netns exec $ns sysctl -qw net.ipv6.conf.$b.disable_ipv6=0 &&
ip -6 addr add fd77::1/64 dev $a nodad &&
ip -n $ns -6 addr add fd77::2/64 dev $b nodad || setup_failed "IPv6 on the pair"

xfer=$(mktemp)
defer "rm -f $xfer /tmp/rftso_ready /tmp/rftso_recv"
cat > "$xfer" <<'PY'
import hashlib, os, socket, sys
role, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
if role == "recv":
    l = socket.socket(fam)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((addr, port))
    l.listen(1)
    open(sys.argv[4], "w").close()
    l.settimeout(60)
    c, _ = l.accept()
    c.settimeout(60)
    h, n = hashlib.sha256(), 0
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        h.update(d)
        n += len(d)
else:
    d = os.urandom(int(sys.argv[4]))
    s = socket.create_connection((addr, port), timeout=60)
    s.sendall(d)
    s.close()
    h, n = hashlib.sha256(d), len(d)
print(n, h.hexdigest())
PY

# transfer ADDR: $bytes over TCP from here to ADDR (on $b); succeeds when
# they arrived intact.
transfer() {
	local port=$((9300 + pfb_checks)) i sent
	rm -f /tmp/rftso_ready
	ip netns exec $ns python3 "$xfer" recv "$1" $port /tmp/rftso_ready \
		> /tmp/rftso_recv &
	for i in $(seq 200); do
		[ -e /tmp/rftso_ready ] && break
		sleep 0.1
	done
	sent=$(python3 "$xfer" send "$1" $port $bytes)
	wait $!
	echo "# sent: $sent, received: $(cat /tmp/rftso_recv)"
	[ -n "$sent" ] && [ "$sent" = "$(cat /tmp/rftso_recv)" ]
}

# feature NAME: "on", "off", "off [requested on]"... of ethtool -k $a.
feature() {
	ethtool -k $a | awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }'
}

# counters: $a's packets (ip -s link, one per frame given to the driver),
# segments and doorbells, its two doorbell histograms (packets and
# segments per doorbell, 8 buckets each), then $b's received and dropped
# frames and TCP checksum errors: one line of numbers.
counters() {
	local s
	s=$(ethtool -S $a)
	echo $(link_stat $a tx_packets) \
		$(echo "$s" | awk '$1 == "tx_segments:" { s = $2 } $1 == "tx_doorbells:" { d = $2 }
			END { print s, d }') \
		$(echo "$s" | awk '$1 ~ /^tx_doorbell_pkts_/ { print $2 }') \
		$(echo "$s" | awk '$1 ~ /^tx_doorbell_segs_/ { print $2 }') \
		$(ip netns exec $ns cat /sys/class/net/$b/statistics/rx_packets \
			/sys/class/net/$b/statistics/rx_dropped) \
		$(ip netns exec $ns awk '$1 == "Tcp:" { if (h) print $(c); else
			for (i = 1; i <= NF; i++) if ($i == "InCsumErrors") { c = i; h = 1 } }' \
			/proc/net/snmp)
}

# phase NAME ADDR: a transfer to ADDR (checked as NAME), and what it moved
# of the counters, once they stand still, into d[]: d[0] packets, d[1]
# segments, d[2] doorbells, d[3..10] packets per doorbell, d[11..18]
# segments per doorbell, d[19] $b rx_packets, d[20] $b rx_dropped, d[21]
# $b TCP checksum errors.
phase() {
	local -a x y
	local i
	x=($(refnic_steady counters))
	check "$1: 4 MB arrive intact" transfer "$2"
	y=($(refnic_steady counters))
	d=()
	for i in "${!y[@]}"; do
		d[i]=$((y[i] - x[i]))
	done
	echo "# $1: ${d[0]} packets, ${d[1]} segments, ${d[2]} doorbells"
}

# hist_checks SEGS_EQUAL: each doorbell counted once in both histograms;
# per doorbell, segments >= packets, so that at every bucket at least as
# many doorbells carry that many segments or more as carry that many
# packets or more; with SEGS_EQUAL (no TSO) the two are equal.
hist_checks() {
	local i pk=0 sg=0 dominated=yes
	check_eq "every doorbell in the packets histogram" \
		$((d[3] + d[4] + d[5] + d[6] + d[7] + d[8] + d[9] + d[10])) "${d[2]}"
	check_eq "every doorbell in the segments histogram" \
		$((d[11] + d[12] + d[13] + d[14] + d[15] + d[16] + d[17] + d[18])) "${d[2]}"
	for i in 7 6 5 4 3 2 1 0; do
		pk=$((pk + d[3 + i])) sg=$((sg + d[11 + i]))
		[ $sg -ge $pk ] || dominated=no
	done
	check_eq "per doorbell, segments >= packets (histograms, bucket by bucket)" \
		$dominated yes
	if [ "$1" = yes ]; then
		check_eq "segments histogram = packets histogram" \
			"${d[*]:11:8}" "${d[*]:3:8}"
	fi
}

# common_checks: the peer got every frame whole and correct, nothing
# dropped, BQL drained.
common_checks() {
	check_eq "$b received every frame $a sent (rx_packets = tx_packets)" \
		"${d[19]}" "${d[0]}"
	check_eq "$b dropped nothing" "${d[20]}" 0
	check_eq "$b: no TCP checksum error" "${d[21]}" 0
	check_eq "BQL drained" "$(refnic_inflight $a)" 0
}

echo "# offloads of $a: sg $(feature scatter-gather), tx $(feature tx-checksumming)," \
     "tso $(feature tcp-segmentation-offload)"
for f in scatter-gather tx-checksum-ip-generic tx-tcp-segmentation tx-tcp6-segmentation; do
	check_eq "$f on by default, not fixed" "$(feature $f)" on
done

# TSO on. At a 1500-byte MTU a TCP segment carries at most 1460 bytes
# (IPv4, no options) or 1440 (IPv6): the data alone needs that many
# segments, whatever the connection's MSS.
for addr in 10.77.0.2 fd77::2; do
	mss=1460
	[ $addr = fd77::2 ] && mss=1440
	phase "TSO on, $addr" $addr
	check_cmp "TSO on, $addr: GSO frames reached the driver (segments > packets)" \
		"${d[1]}" ">" "${d[0]}"
	check_cmp "TSO on, $addr: segments carry the data at one MSS each at most" \
		"${d[1]}" ">=" $(((bytes + mss - 1) / mss))
	hist_checks no
	common_checks
done

# No offloads: what an operator turns off.
check "ethtool -K $a tso off sg off tx off" ethtool -K $a tso off sg off tx off
for f in scatter-gather tx-checksumming tcp-segmentation-offload; do
	check_eq "$f off" "$(feature $f)" off
done
phase "offloads off" 10.77.0.2
check_eq "offloads off: one segment per frame (segments = packets)" "${d[1]}" "${d[0]}"
check_cmp "offloads off: at least the data's segments" "${d[0]}" ">=" $(((bytes + 1459) / 1460))
hist_checks yes
common_checks

# The core keeps TSO off without SG (netdev_fix_features()), and restores it
# with SG, as it was requested. (ethtool's exit status for a request the
# kernel applies in part is its own business: the state is what counts.)
ethtool -K $a tx on tso on > /dev/null 2>&1
check_eq "tx on, TSO requested without SG" \
	"$(feature tx-checksum-ip-generic)/$(feature scatter-gather)" on/off
check_eq "TSO without SG stays off" "$(feature tx-tcp-segmentation)" "off [requested on]"
check "ethtool -K $a sg on" ethtool -K $a sg on
for f in scatter-gather tx-checksumming tcp-segmentation-offload; do
	check_eq "$f back on" "$(feature $f)" on
done
phase "offloads back on" 10.77.0.2
check_cmp "offloads back on: GSO frames again (segments > packets)" "${d[1]}" ">" "${d[0]}"
hist_checks no
common_checks
pfb_exit
