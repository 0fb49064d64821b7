#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tiny rtnetlink client for pfifo_bulk, independent of tc and its plugin.

  pfb_nl.py add    DEV [-p PARENT] [-H HANDLE] [OPT VALUE]... [-a TYPE:FMT:VAL]...
  pfb_nl.py change DEV [-p PARENT] [-H HANDLE] [OPT VALUE]... [-a TYPE:FMT:VAL]...
  pfb_nl.py dump   DEV [-H HANDLE]      qdiscs of DEV as JSON (options, xstats)
  pfb_nl.py xstats DEV [-H HANDLE]      xstats of one pfifo_bulk as JSON

OPT is limit, bulk_bytes, bulk_pkts or mode (auto|bql|nobql|number). -a adds
a raw attribute to TCA_OPTIONS (FMT u8|u16|u32|u64|hex) to send bad input.
--no-nested-flag leaves NLA_F_NESTED off the TCA_OPTIONS nest, as iproute2's
addattr_nest() does. Errors: exit 1, "error: ERRNO: extack message" on
stderr; extack warnings on success go to stderr as "warning: ...".
The option and xstats names are those the tc plugin prints in JSON.
"""
import argparse
import errno
import json
import socket
import struct
import sys

NETLINK_ROUTE = 0
SOL_NETLINK = 270
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11
RTM_NEWQDISC, RTM_GETQDISC = 36, 38
NLMSG_ERROR, NLMSG_DONE = 2, 3
F_REQUEST, F_MULTI, F_ACK = 0x1, 0x2, 0x4
F_DUMP = 0x300
F_REPLACE, F_EXCL, F_CREATE = 0x100, 0x200, 0x400
F_ACK_TLVS = 0x200
NLA_F_NESTED = 0x8000
NLA_TYPE_MASK = 0x3fff
NLMSGERR_ATTR_MSG = 1

TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4
TC_H_ROOT = 0xFFFFFFFF

# include/uapi/linux/pkt_sched_pfifo_bulk.h
MODES = ["auto", "bql", "nobql", "none"]
OPTS = {"limit": (1, "I"), "bulk_bytes": (2, "I"), "bulk_pkts": (3, "I"),
        "mode": (4, "B"), "effective_mode": (5, "B"), "lockless": (6, "B"),
        "coalesce_usecs": (7, "I"), "coalesce_pkts": (8, "I")}
HIST = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"]
XSTATS = {2: "batches", 3: "batch_pkts", 4: "batch_bytes", 5: "hist",
          6: "end_bytes", 7: "end_pkts", 8: "end_budget", 9: "end_empty",
          10: "reschedules", 11: "bypassed", 12: "held", 13: "release_pkts",
          14: "release_timer", 15: "sent_at_once", 16: "held_ns",
          17: "held_ns_max"}
FMTS = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}


def attr(atype, payload):
    hdr = struct.pack("HH", 4 + len(payload), atype)
    return hdr + payload + b"\0" * (-len(payload) % 4)


def parse_attrs(buf):
    out = {}
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("HH", buf, off)
        if alen < 4:
            break
        out[atype & NLA_TYPE_MASK] = buf[off + 4:off + alen]
        off += (alen + 3) & ~3
    return out


def parse_handle(text):
    if text == "root":
        return TC_H_ROOT
    major, _, minor = text.partition(":")
    return (int(major or "0", 16) << 16) | int(minor or "0", 16)


def fmt_handle(h):
    if h == TC_H_ROOT:
        return "root"
    return "%x:%s" % (h >> 16, "%x" % (h & 0xffff) if h & 0xffff else "")


class Rtnl:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                  NETLINK_ROUTE)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.sock.bind((0, 0))
        self.seq = 0

    def request(self, mtype, flags, body):
        self.seq += 1
        msg = struct.pack("IHHII", 16 + len(body), mtype, flags, self.seq,
                          0) + body
        self.sock.send(msg)
        replies = []
        while True:
            data = self.sock.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                mlen, mt, mflags, seq, _ = struct.unpack_from("IHHII", data,
                                                              off)
                payload = data[off + 16:off + mlen]
                off += (mlen + 3) & ~3
                if seq != self.seq:
                    continue
                if mt == NLMSG_DONE:
                    return replies
                if mt == NLMSG_ERROR:
                    err = struct.unpack_from("i", payload)[0]
                    msg = ""
                    if mflags & F_ACK_TLVS:
                        tlv = parse_attrs(payload[20:])
                        msg = tlv.get(NLMSGERR_ATTR_MSG, b"")
                        msg = msg.rstrip(b"\0").decode()
                    if err:
                        raise NlError(-err, msg)
                    if msg:
                        print("warning: " + msg, file=sys.stderr)
                    return replies
                replies.append((mt, payload))
                if not mflags & F_MULTI:
                    return replies


class NlError(Exception):
    def __init__(self, err, msg):
        super().__init__(err, msg)
        self.err = err
        self.msg = msg


def ifindex(dev):
    return socket.if_nametoindex(dev)


def build_options(args):
    opts = b""
    it = iter(args.opts)
    for name in it:
        try:
            value = next(it)
        except StopIteration:
            sys.exit("option %s needs a value" % name)
        if name not in OPTS:
            sys.exit("unknown option %s" % name)
        atype, fmt = OPTS[name]
        num = MODES.index(value) if value in MODES else int(value, 0)
        opts += attr(atype, struct.pack(fmt, num))
    for raw in args.attr:
        atype, fmt, value = raw.split(":", 2)
        if fmt == "hex":
            payload = bytes.fromhex(value)
        else:
            payload = struct.pack(FMTS[fmt], int(value, 0))
        opts += attr(int(atype, 0), payload)
    nest = TCA_OPTIONS | (0 if args.no_nested_flag else NLA_F_NESTED)
    return attr(nest, opts)


def modify(args, flags):
    parent = parse_handle(args.parent)
    handle = parse_handle(args.handle) if args.handle else 0
    body = struct.pack("BxHiIII", socket.AF_UNSPEC, 0, ifindex(args.dev),
                       handle, parent, 0)
    body += attr(TCA_KIND, b"pfifo_bulk\0")
    if args.opts or args.attr or args.empty_options:
        body += build_options(args)
    Rtnl().request(RTM_NEWQDISC, F_REQUEST | F_ACK | flags, body)


def decode_options(buf):
    tb = parse_attrs(buf)
    out = {}
    for name, (atype, fmt) in OPTS.items():
        if atype in tb:
            val = struct.unpack_from(fmt, tb[atype])[0]
            if name in ("mode", "effective_mode"):
                val = MODES[val] if val < len(MODES) else val
            elif name == "lockless":
                val = bool(val)
            out[name] = val
    return out


def decode_xstats(buf):
    out = {}
    for atype, payload in parse_attrs(buf).items():
        name = XSTATS.get(atype)
        if name == "hist":
            hist = parse_attrs(payload)
            out["hist"] = {HIST[t - 1]: struct.unpack("Q", v)[0]
                           for t, v in sorted(hist.items())
                           if 1 <= t <= len(HIST)}
        elif name:
            out[name] = struct.unpack("Q", payload)[0]
    return out


def dump(args):
    want = ifindex(args.dev)
    body = struct.pack("BxHiIII", socket.AF_UNSPEC, 0, want, 0, 0, 0)
    result = []
    for _, payload in Rtnl().request(RTM_GETQDISC, F_REQUEST | F_DUMP, body):
        _, _, idx, handle, parent, _ = struct.unpack_from("BxHiIII", payload)
        if idx != want:
            continue
        tb = parse_attrs(payload[20:])
        kind = tb.get(TCA_KIND, b"").rstrip(b"\0").decode()
        q = {"kind": kind, "handle": fmt_handle(handle),
             "parent": fmt_handle(parent)}
        if args.handle and handle != parse_handle(args.handle):
            continue
        if kind == "pfifo_bulk" and TCA_OPTIONS in tb:
            q["options"] = decode_options(tb[TCA_OPTIONS])
        if TCA_STATS2 in tb:
            st = parse_attrs(tb[TCA_STATS2])
            if TCA_STATS_BASIC in st:
                q["bytes"], q["packets"] = struct.unpack_from(
                    "QI", st[TCA_STATS_BASIC])
            if TCA_STATS_QUEUE in st:
                (q["qlen"], q["backlog"], q["drops"], q["requeues"],
                 q["overlimits"]) = struct.unpack_from("5I",
                                                       st[TCA_STATS_QUEUE])
            if kind == "pfifo_bulk" and TCA_STATS_APP in st:
                q["xstats"] = decode_xstats(st[TCA_STATS_APP])
        result.append(q)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=["add", "change", "replace", "dump",
                                    "xstats"])
    ap.add_argument("dev")
    ap.add_argument("opts", nargs="*")
    ap.add_argument("-p", "--parent", default="root")
    ap.add_argument("-H", "--handle")
    ap.add_argument("-a", "--attr", action="append", default=[])
    ap.add_argument("--no-nested-flag", action="store_true")
    ap.add_argument("--empty-options", action="store_true",
                    help="send an empty TCA_OPTIONS nest")
    args = ap.parse_intermixed_args()
    try:
        if args.cmd == "add":
            modify(args, F_CREATE | F_EXCL)
        elif args.cmd == "change":
            modify(args, 0)
        elif args.cmd == "replace":
            modify(args, F_CREATE | F_REPLACE)
        elif args.cmd == "dump":
            print(json.dumps(dump(args)))
        else:
            qs = [q for q in dump(args) if q["kind"] == "pfifo_bulk"]
            if not qs:
                sys.exit("no pfifo_bulk qdisc on %s" % args.dev)
            print(json.dumps(qs[0].get("xstats", {})))
    except NlError as e:
        print("error: %s: %s" % (errno.errorcode.get(e.err, e.err), e.msg),
              file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
