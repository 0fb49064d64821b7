#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""pfb_batches.py TRACE DEV [BULK_BYTES]: rebuild every batch from an ftrace
text trace of qdisc:qdisc_dequeue (filtered to DEV, skbaddr != 0) and
net:net_dev_start_xmit (filtered to DEV), and print what they were as JSON.

A batch is one qdisc_dequeue event with packets=N; the core then hands those
N packets to the driver on the same CPU, so the next N net_dev_start_xmit
events of that CPU carry their lengths (skb->len, the length the qdisc
counts). A batch the driver cut (queue stopped mid-batch: the rest is
requeued and leaves later as batches of its own) is counted as "cut" and
its bytes are not judged.

With BULK_BYTES, also judge the byte cap's rule, "a batch ends at the first
packet that reaches the cap": "past_cap" counts batches that went on after
reaching it (must be 0), "reached" those whose bytes reached it. Each of
those ended at the cap, so without a packet cap "reached" equals the
qdisc's end_bytes.

Output: {"batches", "packets", "max_pkts", "max_bytes", "hist" {size: n},
"cut", "orphans" (transmits outside any batch), "past_cap", "reached"}.
"""
import json
import re
import sys

LINE = re.compile(r"\[(\d+)\].*?: (qdisc_dequeue|net_dev_start_xmit): (.*)$")
PACKETS = re.compile(r"\bpackets=(\d+)")
DEV = re.compile(r"\bdev=(\S+)")
LEN = re.compile(r"\blen=(\d+)")


def main():
    path, dev = sys.argv[1], sys.argv[2]
    cap = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    pending = {}            # cpu -> [want, [lens]]
    done = []               # lengths of every whole batch
    out = {"batches": 0, "packets": 0, "max_pkts": 0, "max_bytes": 0,
           "hist": {}, "cut": 0, "orphans": 0, "past_cap": 0, "reached": 0}

    with open(path) as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            cpu, event, rest = int(m.group(1)), m.group(2), m.group(3)
            if event == "qdisc_dequeue":
                p = pending.pop(cpu, None)
                if p:
                    out["cut"] += 1
                n = int(PACKETS.search(rest).group(1))
                out["batches"] += 1
                out["packets"] += n
                out["max_pkts"] = max(out["max_pkts"], n)
                out["hist"][n] = out["hist"].get(n, 0) + 1
                pending[cpu] = [n, []]
                continue
            d = DEV.search(rest)
            if not d or d.group(1) != dev:
                continue
            p = pending.get(cpu)
            if not p:
                out["orphans"] += 1
                continue
            p[1].append(int(LEN.search(rest).group(1)))
            if len(p[1]) == p[0]:
                done.append(p[1])
                del pending[cpu]
    out["cut"] += len(pending)

    for lens in done:
        total = sum(lens)
        out["max_bytes"] = max(out["max_bytes"], total)
        if cap:
            if total - lens[-1] >= cap:
                out["past_cap"] += 1
            if total >= cap:
                out["reached"] += 1
    out["hist"] = {str(k): v for k, v in sorted(out["hist"].items())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
