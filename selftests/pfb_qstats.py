#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The per-queue statistics of a device through the netdev generic netlink
# family (NETDEV_CMD_QSTATS_GET, 6.9+; what "ynl --family netdev --dump
# qstats-get" prints), independently of ethtool. Prints a JSON array, one
# object per queue: {"type": "rx"|"tx", "id": N, and those of the counters
# packets, bytes (both), stop, wake (TX) that the driver reports}. With
# --device, the device's totals (queues and base) in one object instead:
# {"rx": {...}, "tx": {...}}, the same counters.
# Exit 2 when the kernel has no such command (before 6.9) or the driver no
# netdev_stat_ops (EOPNOTSUPP).
#
#   pfb_qstats.py [--device] DEV

import errno
import json
import os
import socket
import struct
import sys

from pfb_nl import attr, parse_attrs

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
NLMSG_ERROR, NLMSG_DONE = 2, 3
F_REQUEST, F_DUMP = 0x1, 0x300

# include/uapi/linux/netdev.h
NETDEV_CMD_QSTATS_GET = 12
A_IFINDEX, A_QUEUE_TYPE, A_QUEUE_ID, A_SCOPE = 1, 2, 3, 4
SCOPE_QUEUE = 1
QUEUE_TYPES = {0: "rx", 1: "tx"}
COUNTERS = {"rx": {8: "packets", 9: "bytes"},
            "tx": {10: "packets", 11: "bytes", 33: "stop", 34: "wake"}}


def uint(b):
    return struct.unpack("=Q" if len(b) == 8 else "=I", b)[0]


def talk(sock, family, cmd, flags, attrs):
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    sock.send(struct.pack("=IHHII", 16 + len(body), family, F_REQUEST | flags,
                          1, 0) + body)
    msgs = []
    while True:
        data = sock.recv(65536)
        while len(data) >= 16:
            ln, mtype = struct.unpack_from("=IH", data)
            if mtype == NLMSG_ERROR:
                err = -struct.unpack_from("=i", data, 16)[0]
                if err:
                    raise OSError(err, os.strerror(err))
                return msgs
            if mtype == NLMSG_DONE:
                return msgs
            msgs.append(parse_attrs(data[20:ln]))
            if not flags & F_DUMP:
                return msgs
            data = data[(ln + 3) & ~3:]


def main():
    device = sys.argv[1:2] == ["--device"]
    ifindex = socket.if_nametoindex(sys.argv[-1])
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    sock.bind((0, 0))
    try:
        fam = talk(sock, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0,
                   attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"))
        family = struct.unpack("=H", fam[0][CTRL_ATTR_FAMILY_ID][:2])[0]
        msgs = talk(sock, family, NETDEV_CMD_QSTATS_GET, F_DUMP,
                    attr(A_IFINDEX, struct.pack("=I", ifindex)) +
                    (b"" if device else attr(A_SCOPE, struct.pack("=I", SCOPE_QUEUE))))
    except OSError as e:
        print("pfb_qstats: %s" % e, file=sys.stderr)
        sys.exit(2 if e.errno in (errno.ENOENT, errno.EOPNOTSUPP,
                                  errno.EINVAL) else 1)
    if device and not msgs:
        print("pfb_qstats: no statistics for %s" % sys.argv[-1], file=sys.stderr)
        sys.exit(2)
    if device:
        print(json.dumps({t: {name: uint(msgs[0][a]) for a, name in c.items() if a in msgs[0]}
                          for t, c in COUNTERS.items()}))
        return
    out = []
    for m in msgs:
        q = {"type": QUEUE_TYPES.get(uint(m[A_QUEUE_TYPE])),
             "id": uint(m[A_QUEUE_ID])}
        for t, name in COUNTERS[q["type"]].items():
            if t in m:
                q[name] = uint(m[t])
        out.append(q)
    print(json.dumps(sorted(out, key=lambda q: (q["type"], q["id"]))))


if __name__ == "__main__":
    main()
