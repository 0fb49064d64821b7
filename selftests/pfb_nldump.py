#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Dumps the pfifo_bulk qdiscs of a device with raw rtnetlink, decoding the
# attributes straight from the uapi numbering
# (include/uapi/linux/pkt_sched_pfifo_bulk.h), independently of tc and
# bulkctl. Prints a JSON array, one object per qdisc, with the tools' key
# names: handle, parent (numbers), options {limit, bulk_bytes, bulk_pkts,
# mode, effective_mode, lockless, coalesce_usecs, coalesce_pkts (numbers)},
# xstats {batches, ..., batch_hist}.
#
#   pfb_nldump.py DEV

import json
import socket
import struct
import sys

RTM_GETQDISC, RTM_NEWQDISC = 38, 36
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_APP = 4

OPTS = {1: ("limit", "I"), 2: ("bulk_bytes", "I"), 3: ("bulk_pkts", "I"),
        4: ("mode", "B"), 5: ("effective_mode", "B"), 6: ("lockless", "B"),
        7: ("coalesce_usecs", "I"), 8: ("coalesce_pkts", "I")}
XSTATS = {2: "batches", 3: "batch_pkts", 4: "batch_bytes", 6: "end_bytes",
          7: "end_pkts", 8: "end_budget", 9: "end_empty", 10: "reschedules",
          11: "bypassed", 12: "held", 13: "release_pkts", 14: "release_timer",
          15: "sent_at_once", 16: "held_ns", 17: "held_ns_max"}
XSTATS_HIST = 5
HIST_KEYS = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"]


def attrs(buf):
    out = {}
    while len(buf) >= 4:
        ln, t = struct.unpack_from("=HH", buf)
        if ln < 4 or ln > len(buf):
            break
        out[t & 0x3fff] = buf[4:ln]
        buf = buf[(ln + 3) & ~3:]
    return out


def decode(payload):
    _, ifindex, handle, parent, _ = struct.unpack_from("=BxxxiIII", payload)
    a = attrs(payload[20:])
    if a.get(TCA_KIND, b"").rstrip(b"\0") != b"pfifo_bulk":
        return None
    q = {"ifindex": ifindex, "handle": handle, "parent": parent, "options": {}}
    for t, v in attrs(a.get(TCA_OPTIONS, b"")).items():
        if t in OPTS:
            name, fmt = OPTS[t]
            q["options"][name] = struct.unpack_from("=" + fmt, v)[0]
    app = attrs(attrs(a.get(TCA_STATS2, b"")).get(TCA_STATS_APP, b""))
    if app:
        x = q["xstats"] = {}
        for t, v in app.items():
            if t in XSTATS:
                x[XSTATS[t]] = struct.unpack_from("=Q", v)[0]
            elif t == XSTATS_HIST:
                x["batch_hist"] = {HIST_KEYS[b - 1]: struct.unpack_from("=Q", hv)[0]
                                   for b, hv in attrs(v).items()
                                   if 1 <= b <= len(HIST_KEYS)}
    return q


def main():
    ifindex = socket.if_nametoindex(sys.argv[1])
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    tcm = struct.pack("=BxxxiIII", 0, 0, 0, 0, 0)
    s.send(struct.pack("=IHHII", 16 + len(tcm), RTM_GETQDISC,
                       NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + tcm)
    out = []
    while True:
        data = s.recv(65536)
        while len(data) >= 16:
            ln, typ = struct.unpack_from("=IH", data)
            if typ == NLMSG_DONE:
                print(json.dumps(out, sort_keys=True))
                return 0
            if typ == NLMSG_ERROR:
                print("netlink error", file=sys.stderr)
                return 1
            if typ == RTM_NEWQDISC:
                q = decode(data[16:ln])
                if q and q["ifindex"] == ifindex:
                    out.append(q)
            data = data[(ln + 3) & ~3:]


if __name__ == "__main__":
    sys.exit(main())
