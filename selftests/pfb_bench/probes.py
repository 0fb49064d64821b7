# SPDX-License-Identifier: GPL-2.0
"""Probes and counters: kprobes on the spin-lock functions and the
qdisc_dequeue histogram, the qdisc's and the driver's counters, and the
figures of one measurement from two snapshots of them."""

import glob
import json
import os
import re

from .defs import BUCKETS, BUCKET_EDGES, DB_BUCKETS, DB_SEG_BUCKETS, LOCKS, PKTGEN, TRACING, VIRTIO_KICKS
from .system import append, read, sh


class Probes:
    """Spin-lock calls (a kprobe + hist per function in LOCKS) and batch
    sizes per device (qdisc:qdisc_dequeue hist on ifindex and packets, only
    events with an skb, only the devices under test).

    All are switched on once for the whole count phase and read as
    differences between snapshots: arming a kprobe on _raw_spin_lock
    patches code that the other CPUs run all the time, and doing that
    between every two runs has crashed a TCG guest (ftrace text poke)."""

    LOCK_SPEC = "hist:keys=common_type:vals=hitcount"

    def __init__(self, ifindexes):
        self.triggers = {name: "%s/events/kprobes/%s/trigger" % (TRACING, event)
                         for name, (event, _) in LOCKS.items()}
        self.deq_trigger = "%s/events/qdisc/qdisc_dequeue/trigger" % TRACING
        self.deq_spec = ("hist:keys=ifindex,packets:vals=hitcount:size=4096 "
                         "if skbaddr != 0 && handle == 0x10000 && (%s)" %
                         " || ".join("ifindex == %d" % i for i in sorted(ifindexes)))
        self.on = False
        self.armed = []
        try:
            for event, func in LOCKS.values():
                append("%s/kprobe_events" % TRACING, "p:%s %s\n" % (event, func))
                self.armed.append(event)
        except OSError:
            self.close()
            raise

    def specs(self):
        return [(t, self.LOCK_SPEC) for t in self.triggers.values()] + \
            [(self.deq_trigger, self.deq_spec)]

    def start(self):
        for trig, spec in self.specs():
            append(trig, spec)
        self.on = True

    def stop(self):
        if not self.on:
            return
        self.on = False
        for trig, spec in self.specs():
            try:
                append(trig, "!" + spec)
            except OSError:
                pass

    def snapshot(self, ifindex):
        """({lock name: hits}, {batch size: count}) so far, for one device."""
        counts = {}
        for name, trig in self.triggers.items():
            m = re.search(r"hitcount:\s+(\d+)", read(trig.replace("trigger", "hist")))
            counts[name] = int(m.group(1)) if m else 0
        batches = {}
        for m in re.finditer(r"ifindex:\s+(\d+), packets:\s+(\d+)\s*\}\s+hitcount:\s+(\d+)",
                             read(self.deq_trigger.replace("trigger", "hist"))):
            if int(m.group(1)) == ifindex:
                batches[int(m.group(2))] = int(m.group(3))
        return counts, batches

    def close(self):
        self.stop()
        for event in self.armed:
            try:
                append("%s/kprobe_events" % TRACING, "-:%s\n" % event)
            except OSError:
                pass
        self.armed = []


def bucketize(batches):
    out = [0] * len(BUCKETS)
    for size, hits in batches.items():
        i = 0
        while i < len(BUCKET_EDGES) and size > BUCKET_EDGES[i]:
            i += 1
        out[i] += hits
    return out


def busy_jiffies():
    f = read("/proc/stat").splitlines()[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, f[:8])
    return user + nice + system + irq + softirq + steal


def ethtool_stats(dev, ns=None):
    out = {}
    for line in sh("ethtool -S %s" % dev, check=False, ns=ns).splitlines():
        k, _, v = line.strip().partition(":")
        if v.strip().isdigit():
            out[k] = int(v)
    return out


def doorbell_count(eth):
    """The doorbells in an ethtool -S dump: refnic's tx_doorbells, else
    virtio_net's TX kicks summed over its TX queues; None when the driver
    counts neither (e1000e)."""
    if "tx_doorbells" in eth:
        return eth["tx_doorbells"]
    kicks = [v for k, v in eth.items() if VIRTIO_KICKS.match(k)]
    return sum(kicks) if kicks else None


def link_stat(dev, key, ns=None):
    if ns:
        return int(sh("cat /sys/class/net/%s/statistics/%s" % (dev, key), ns=ns))
    return int(read("/sys/class/net/%s/statistics/%s" % (dev, key)))


def qdisc_stats(dev, ns=None):
    """The root qdisc's counters (tc -s -j): packets, drops, qlen and, for
    pfifo_bulk (with our tc plugin), batches, batch_pkts, batch_hist, the
    coalescing counters (held, release_pkts, ...) and its options. Under
    an mq root, its children's, merged: mq sums only the generic counters."""
    return root_stats(json.loads(sh("tc -s -j qdisc show dev %s" % dev, ns=ns) or "[]"))


def root_stats(dump):
    """qdisc_stats from the qdiscs of a device as "tc -s -j qdisc show"
    lists them."""
    root = next((q for q in dump if q.get("root") or q.get("parent") in (None, "root")), None)
    if not root:
        return {}
    qdiscs = ([q for q in dump if not q.get("root") and
               handle_major(q.get("parent", "")) == handle_major(root["handle"])]
              if root.get("kind") == "mq" else [root])
    return merged([dict(q, **(q.get("xstats") or {})) for q in qdiscs])


def handle_major(handle):
    """The major number of a handle or parent as tc prints it: "1:" and
    "1:2" give "1"; "0:" and ":1" (an unnamed mq's children) give ""."""
    return handle.split(":")[0].lstrip("0")


def merged(figs):
    """Several qdiscs' figures as one: counters summed (a histogram's
    buckets too), maxima as the largest, anything else (kind, handle,
    options) the first one's."""
    out = {}
    for f in figs:
        for k, v in f.items():
            if k not in out:
                out[k] = merged([v]) if isinstance(v, dict) and k != "options" else v
            elif isinstance(v, bool) or k == "options" or not isinstance(v, (int, float, dict)):
                continue
            elif isinstance(v, dict):
                out[k] = merged([out[k], v])
            elif k.endswith("_max") or k == "maxpacket":
                out[k] = max(out[k], v)
            else:
                out[k] += v
    return out


def count_diff(a, b, key):
    return (b.get(key) or 0) - (a.get(key) or 0)


def coalescing(q0, q1):
    """pfifo_bulk's coalescing over a window, from its xstats: holds, how
    they ended (coalesce_pkts reached, the timer), batches sent at once
    (too sparse to wait for), and how long a held batch's oldest packet
    waited, mean and longest. The longest is the qdisc's maximum since it
    was made: a fresh qdisc per measurement, so this window's."""
    released = count_diff(q0, q1, "release_pkts") + count_diff(q0, q1, "release_timer")
    fig = {k: count_diff(q0, q1, k) for k in ("held", "release_pkts", "release_timer",
                                               "sent_at_once")}
    fig["held_mean_us"] = count_diff(q0, q1, "held_ns") / released / 1e3 if released else None
    fig["held_max_us"] = (q1.get("held_ns_max") or 0) / 1e3
    return fig


def pktgen_threads():
    """The pids of pktgen's kernel threads (kpktgend_N)."""
    pids = []
    for path in glob.glob("/proc/[0-9]*/comm"):
        try:
            if re.match(r"kpktgend_\d+$", read(path).strip()):
                pids.append(path.split("/")[2])
        except OSError:
            pass
    return pids


def schedstat(pids):
    """(ns on a CPU, times switched onto one) summed over PIDS, from
    /proc/PID/schedstat: exact, and it patches nothing."""
    ns = runs = 0
    for pid in pids:
        f = read("/proc/%s/schedstat" % pid).split()
        ns, runs = ns + int(f[0]), runs + int(f[2])
    return ns, runs


def pktgen_elapsed(dev, ncpu):
    """A counted run's time in seconds: the longest of pktgen's threads on
    DEV, each from its first frame to its last ("Result: OK: N(cX+dY)
    usec", its own clock). None when a thread reports no result."""
    longest = 0
    for c in range(ncpu):
        m = re.search(r"Result: OK: (\d+)\(c", read("%s/%s@%d" % (PKTGEN, dev, c)))
        if not m:
            return None
        longest = max(longest, int(m.group(1)))
    return longest / 1e6 if longest else None


def pace_delay_ns(gap_us, ncpu):
    """paced64: pktgen's delay per thread for a mean gap of GAP_US between
    the frames of all NCPU threads together."""
    return int(round(gap_us * 1000 * ncpu))


def figures(s0, s1, extra, load, counting, dumps):
    """The figures of one measurement from its two snapshots."""
    q0, q1 = s0["qdisc"], s1["qdisc"]
    sent = s1["tx"] - s0["tx"]
    dropped = count_diff(q0, q1, "drops")
    offered = count_diff(q0, q1, "packets") + dropped + count_diff(q0, q1, "qlen")
    # a counted run: pktgen's own time, not the snapshots' (which hold
    # the commands that read the counters and the wait for the ring)
    secs = extra.get("window_s") or s1["t"] - s0["t"]
    if counting:
        fig = count_figures(s0, s1, offered, sent, dropped)
    else:
        fig = time_figures(s0, s1, extra, load, dumps, secs, (offered, sent, dropped))
    fig.update(qdisc_figures(q0, q1))
    # counters per sent packet, read at one moment: after a timed run's
    # backlog drained (s1["drained"]), else s1's own
    d1 = s1.get("drained", s1)
    fig.update(doorbell_figures(s0["eth"], d1["eth"], d1["tx"] - s0["tx"]))
    fig.update(stop_figures(q0, d1["qdisc"], s0["eth"], d1["eth"], d1["tx"] - s0["tx"]))
    for k in ("pktgen_offered", "pg_runs_per_frame", "pg_cpu_ns_per_frame"):
        if k in extra:
            fig[k] = extra[k]
    return fig


def count_figures(s0, s1, offered, sent, dropped):
    """The count phase's figures: spin-lock calls per packet and the
    tracepoint's batches."""
    q0, q1 = s0["qdisc"], s1["qdisc"]
    fig = dict(offered=offered, sent=sent, dropped=dropped)
    total = 0
    for name in LOCKS:
        hits = s1["locks"][name] - s0["locks"][name]
        total += hits
        fig[name + "_per_pkt"] = hits / sent if sent else None
        fig[name + "_per_offered"] = hits / offered if offered else None
    fig["lockops_per_pkt"] = total / sent if sent else None
    fig["lockops_per_offered"] = total / offered if offered else None
    b0 = s0["batches"]
    batches = {k: v - b0.get(k, 0) for k, v in s1["batches"].items() if v > b0.get(k, 0)}
    # a packet the driver hands back (a requeue) leaves later from the
    # core's requeue list, one per dequeue: an event of 1 of its own for
    # a packet already counted in the batch it came in. Not a batch the
    # qdisc built; the xstats do not count it either.
    requeued = min(count_diff(q0, q1, "requeues"), batches.get(1, 0))
    if requeued:
        batches[1] -= requeued
    nb = sum(batches.values())
    traced = sum(k * v for k, v in batches.items())
    fig["mean_batch"] = traced / nb if nb else None
    fig["hist"] = bucketize(batches)
    # pfifo_bulk, pfifo, pfifo_fast, fq_codel (TCQ_F_CAN_BYPASS) hand a packet that finds
    # the queue empty and idle straight to the driver: no dequeue, no
    # event, a batch of 1 the tracepoint never sees. The qdisc counts it.
    qsent = count_diff(q0, q1, "packets")
    if qsent > 0:
        bypassed = max(0, qsent - traced)
        fig["bypass_share"] = bypassed / qsent
        fig["mean_batch_all"] = ((traced + bypassed) / (nb + bypassed)
                                 if nb + bypassed else None)
    return fig


def time_figures(s0, s1, extra, load, dumps, secs, counts):
    """The time phase's figures: rates, busy CPU per packet, service
    demand, latency. counts: (offered, sent, dropped)."""
    offered, sent, dropped = counts
    fig = dict(offered_pps=offered / secs, pps=sent / secs, dropped_pps=dropped / secs)
    hz = os.sysconf("SC_CLK_TCK")
    cpu_ns = extra.get("busy_jiffies", s1["cpu"] - s0["cpu"]) * 1e9 / hz
    fig["cpu_ns_per_pkt"] = cpu_ns / sent if sent else None
    if "rcvd_bytes" in extra:
        mb = extra["rcvd_bytes"] / 1e6
        fig["mbps"] = mb * 8 / secs
        fig["svc_us_per_mb"] = cpu_ns / 1e3 / mb if mb else None
    for k in ("p50_us", "p90_us", "p95_us", "p99_us"):
        if k in extra:
            fig[k] = extra[k]
    if load == "rr":
        # one request in flight: rates and CPU say nothing here
        for k in ("offered_pps", "pps", "dropped_pps", "cpu_ns_per_pkt"):
            fig.pop(k, None)
    if dumps is not None:
        fig["dumps_per_s"] = dumps
    return fig


def qdisc_figures(q0, q1):
    """The qdisc's own batch counters (pfifo_bulk) and its coalescing."""
    fig = {}
    nb = count_diff(q0, q1, "batches")
    if "batches" in q1:
        fig["qd_mean_batch"] = count_diff(q0, q1, "batch_pkts") / nb if nb else None
        h0, h1 = q0.get("batch_hist") or {}, q1.get("batch_hist") or {}
        fig["qd_hist"] = [h1.get(b, 0) - h0.get(b, 0) for b in BUCKETS]
    if "held" in q1 and (q1.get("options") or {}).get("coalesce_usecs"):
        fig.update(coalescing(q0, q1))
    return fig


def stop_figures(q0, q1, e0, e1, sent):
    """Where a batch can break up before the driver: the qdisc's requeues
    (packets the driver or a stopped queue handed back; each leaves
    later alone from the core's requeue list), and refnic's queue stops
    per 1000 sent packets: all of them (driver's and BQL's), when ethtool
    -S has them (before 6.9; after, they are in netdev netlink's qstats,
    which this does not read), and those for a full ring."""
    fig = {"requeues": count_diff(q0, q1, "requeues")}
    if sent > 0:
        fig["requeues_per_kpkt"] = 1000 * fig["requeues"] / sent
        if "tx_stops" in e1:
            fig["stops_per_kpkt"] = 1000 * count_diff(e0, e1, "tx_stops") / sent
        if "tx_ring_full" in e1:
            fig["ring_full_per_kpkt"] = 1000 * count_diff(e0, e1, "tx_ring_full") / sent
    return fig


def doorbell_figures(e0, e1, sent):
    """The driver's doorbells per packet, from two ethtool -S snapshots."""
    fig = {}
    db0, db1 = doorbell_count(e0), doorbell_count(e1)
    if "tx_doorbells" in e1:
        # refnic: its doorbells per sent packet (its tx_packets are in ip -s
        # link only, read with ethtool -S in one snapshot)
        if sent > 0:
            fig["doorbells_per_pkt"] = (db1 - db0) / sent
            fig["db_hist"] = [count_diff(e0, e1, k) for k in DB_BUCKETS]
        # TSO frames: also per segment on the wire, a NIC's per-packet view
        nseg = count_diff(e0, e1, "tx_segments") if "tx_segments" in e1 else 0
        if sent > 0 and nseg > sent:
            fig["segs_per_pkt"] = nseg / sent
            fig["doorbells_per_seg"] = (db1 - db0) / nseg
            fig["db_seg_hist"] = [count_diff(e0, e1, k) for k in DB_SEG_BUCKETS]
    elif db0 is not None and db1 is not None and sent > 0:
        # virtio_net: kicks per sent packet (6.12 has no TX packet count
        # in ethtool -S)
        fig["doorbells_per_pkt"] = (db1 - db0) / sent
    return fig
