#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Writes canned RTM_NEWQDISC messages for a pfifo_bulk qdisc, the way the
# kernel dumps one, to a file that "tc monitor file FILE" and
# "bulkctl show file FILE" read. The print paths can then be checked on a
# host whose kernel has no pfifo_bulk. The values are fixed and listed in
# VALUES; the messages also carry attributes from a "newer kernel" (an
# unknown option, an unknown xstat, a ninth histogram bucket) that readers
# must skip, a second qdisc with its nests truncated or empty, and two with
# the sizes and caps tc prints its own way: 65540 bytes is "64Kb", as tc
# prints any size, and a cap of 0 (none) is not printed; the last one has a
# mean batch above a million (1234567.33), which JSON must print as such,
# not as %g's 1.23457e+06.
#
# With "tc-json" the file holds instead the dumps whose JSON tc and bulkctl
# must print identically (host_json.sh): handle 0 at the root (a
# default_qdisc), handle-0 children of a default mq, counters beyond 32 bits,
# rate estimators, options with coalescing on.
#
# With "watch-0" and "watch-1", the two samples of "bulkctl watch" (one per
# dump, host_json.sh): qdisc 11: counts on, its 32-bit drops counter
# wrapping (0xfffffff0, then 32 later 0x10); 12: is deleted and created
# again between them (fewer packets), with more drops than the old one had.
#
#   pfb_canned.py FILE [IFINDEX [tc-json | watch-0 | watch-1]]

import struct
import sys

RTM_NEWQDISC = 36
NLA_F_NESTED = 0x8000
TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP, TCA_STATS_PKT64 = 1, 3, 4, 8
TCA_STATS_RATE_EST, TCA_STATS_RATE_EST64 = 2, 5
TC_H_ROOT = 0xFFFFFFFF

VALUES = {
    "limit": 1000, "bulk_bytes": 65536, "bulk_pkts": 16,
    "mode": 0, "effective_mode": 2, "lockless": 1,
    "bytes": 123456789, "packets": 98765, "drops": 7, "overlimits": 0,
    "requeues": 3, "backlog": 1500, "qlen": 1,
    "batches": 40000, "batch_pkts": 98765, "batch_bytes": 123456789,
    "hist": [10000, 9000, 8000, 7000, 4000, 1500, 400, 100],
    "end_bytes": 11, "end_pkts": 22, "end_budget": 33, "end_empty": 39934,
    "reschedules": 5, "bypassed": 6,
    "coalesce_usecs": 50, "coalesce_pkts": 8,
    "held": 900, "release_pkts": 700, "release_timer": 199,
    "sent_at_once": 12, "held_ns": 21000000, "held_ns_max": 53100,
}


def attr(t, payload):
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, t) + payload + b"\0" * ((4 - ln % 4) % 4)


def u8(t, v): return attr(t, struct.pack("=B", v))
def u32(t, v): return attr(t, struct.pack("=I", v))
def u64(t, v): return attr(t, struct.pack("=Q", v))
def nest(t, *a): return attr(t | NLA_F_NESTED, b"".join(a))


def qdisc_msg(ifindex, handle, parent, attrs):
    tcm = struct.pack("=BxxxiIII", 0, ifindex, handle, parent, 2)
    body = tcm + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC, 0, 1, 0) + body


def full(ifindex):
    v = VALUES
    opts = nest(TCA_OPTIONS, u32(1, v["limit"]), u32(2, v["bulk_bytes"]),
                u32(3, v["bulk_pkts"]), u8(4, v["mode"]),
                u8(5, v["effective_mode"]), u8(6, v["lockless"]),
                u32(7, v["coalesce_usecs"]), u32(8, v["coalesce_pkts"]),
                u32(42, 0xdead))
    hist = nest(5, *[u64(i + 1, n) for i, n in enumerate(v["hist"])],
                u64(9, 12345))
    app = nest(TCA_STATS_APP, u64(2, v["batches"]), u64(3, v["batch_pkts"]),
               u64(4, v["batch_bytes"]), hist, u64(6, v["end_bytes"]),
               u64(7, v["end_pkts"]), u64(8, v["end_budget"]),
               u64(9, v["end_empty"]), u64(10, v["reschedules"]),
               u64(11, v["bypassed"]), u64(12, v["held"]),
               u64(13, v["release_pkts"]), u64(14, v["release_timer"]),
               u64(15, v["sent_at_once"]), u64(16, v["held_ns"]),
               u64(17, v["held_ns_max"]),
               u64(77, 999), attr(1, b""))
    basic = attr(TCA_STATS_BASIC, struct.pack("=QI4x", v["bytes"], 0))
    queue = attr(TCA_STATS_QUEUE, struct.pack("=5I", v["qlen"], v["backlog"],
                                              v["drops"], v["requeues"],
                                              v["overlimits"]))
    # PKT64 right after BASIC, as the kernel puts it (tc 6.15 looks there)
    stats = nest(TCA_STATS2, basic, u64(TCA_STATS_PKT64, v["packets"]), queue, app)
    return qdisc_msg(ifindex, 0x10000, TC_H_ROOT,
                     [attr(TCA_KIND, b"pfifo_bulk\0"), opts, stats])


def sparse(ifindex):
    # Options with a short (2-byte) limit, which readers must ignore, and an
    # empty xstats nest.
    opts = nest(TCA_OPTIONS, attr(1, b"\1\0"), u32(3, 4))
    stats = nest(TCA_STATS2, nest(TCA_STATS_APP))
    return qdisc_msg(ifindex, 0x20000, 0x10001,
                     [attr(TCA_KIND, b"pfifo_bulk\0"), opts, stats])


def sizes(ifindex):
    # Not a multiple of 1 KiB, within tc's rounding; no packet cap; a child.
    opts = nest(TCA_OPTIONS, u32(1, 500), u32(2, 65540), u32(3, 0), u8(4, 1),
                u8(5, 3), u8(6, 0), u32(7, 0), u32(8, 8))
    return qdisc_msg(ifindex, 0x30000, 0x10002,
                     [attr(TCA_KIND, b"pfifo_bulk\0"), opts])


def no_caps(ifindex):
    opts = nest(TCA_OPTIONS, u32(1, 100), u32(2, 0), u32(3, 0), u8(4, 0),
                u8(5, 1), u8(6, 1))
    return qdisc_msg(ifindex, 0x40000, 0x10003,
                     [attr(TCA_KIND, b"pfifo_bulk\0"), opts])


def big_mean(ifindex):
    app = nest(TCA_STATS_APP, u64(2, 3), u64(3, 3703702))
    stats = nest(TCA_STATS2, app)
    return qdisc_msg(ifindex, 0x50000, 0x10004,
                     [attr(TCA_KIND, b"pfifo_bulk\0"), nest(TCA_OPTIONS), stats])


def tc_json(ifindex):
    # What the kernel dumps for a pfifo_bulk: handle 0 as root, or under a
    # default mq (8001:), with big counters and an estimator.
    def opts(coalesce):
        return nest(TCA_OPTIONS, u32(1, 1000), u32(2, 0), u32(3, 0), u8(4, 0),
                    u8(5, 1), u8(6, 1), u32(7, coalesce), u32(8, 8))

    def stats(scale, est):
        big = 1 << 32
        app = nest(TCA_STATS_APP,
                   *[u64(t, scale * big + t) for t in (2, 3, 4)],
                   nest(5, *[u64(i, scale * big + i) for i in range(1, 9)]),
                   *[u64(t, scale * big + t) for t in range(6, 18)])
        basic = attr(TCA_STATS_BASIC, struct.pack("=QI4x", scale * big * 1500,
                                                  (scale * big + 7) & 0xffffffff))
        queue = attr(TCA_STATS_QUEUE, struct.pack("=5I", 3, 4500, 4000000000, 5, 6))
        rate = []
        if est:
            rate = [attr(TCA_STATS_RATE_EST, struct.pack("=II", 125000, 300)),
                    attr(TCA_STATS_RATE_EST64, struct.pack("=QQ", 5 * big, 4 * 10**9))]
        # in the kernel's order (gnet_stats_copy_basic(), _rate_est(),
        # _queue(), _app()): tc 6.15 takes PKT64 only right after BASIC
        return nest(TCA_STATS2, basic, u64(TCA_STATS_PKT64, scale * big + 7),
                    *rate, queue, app)

    kind = attr(TCA_KIND, b"pfifo_bulk\0")
    mq = attr(TCA_KIND, b"mq\0")
    return [qdisc_msg(ifindex, 0, TC_H_ROOT, [kind, opts(0), stats(1, True)]),
            qdisc_msg(ifindex, 0x80010000, TC_H_ROOT, [mq, stats(0, False)]),
            qdisc_msg(ifindex, 0, 0x80010001, [kind, opts(800), stats(2, False)]),
            qdisc_msg(ifindex, 0, 0x80010002, [kind, opts(1500000), stats(3, True)])]


def watch(ifindex, n):
    def q(handle, packets, drops, batches):
        app = nest(TCA_STATS_APP, u64(2, batches), u64(3, packets))
        basic = attr(TCA_STATS_BASIC, struct.pack("=QI4x", 1500 * packets, packets))
        queue = attr(TCA_STATS_QUEUE, struct.pack("=5I", 0, 0, drops, 0, 0))
        stats = nest(TCA_STATS2, basic, u64(TCA_STATS_PKT64, packets), queue, app)
        return qdisc_msg(ifindex, handle << 16, 0x10000 | (handle & 0xf),
                         [attr(TCA_KIND, b"pfifo_bulk\0"), stats])

    if n == 0:
        return [q(0x11, 5000, 0xfffffff0, 1000), q(0x12, 1000, 5, 200)]
    return [q(0x11, 5100, 0x10, 1010), q(0x12, 50, 7, 10)]


if __name__ == "__main__":
    ifindex = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    what = sys.argv[3] if len(sys.argv) > 3 else ""
    if what == "tc-json":
        msgs = tc_json(ifindex)
    elif what.startswith("watch-"):
        msgs = watch(ifindex, int(what[6:]))
    else:
        msgs = [make(ifindex) for make in (full, sparse, sizes, no_caps, big_mean)]
    with open(sys.argv[1], "wb") as f:
        f.write(b"".join(msgs))
