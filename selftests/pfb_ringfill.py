#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Fills a device's TX ring past the qdisc: full-size frames on an AF_PACKET
# socket with PACKET_QDISC_BYPASS (straight to ndo_start_xmit, as pktgen's
# start_xmit mode), until the driver refuses one because its queue is
# stopped (ENOBUFS). The qdisc sees none of them. Prints the number taken.
#
#   pfb_ringfill.py DEV [MAX]

import errno
import socket
import sys

PACKET_QDISC_BYPASS = 20
SO_SNDBUFFORCE = 32
SOL_PACKET = 263

dev = sys.argv[1]
most = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
# a full ring of full-size frames stays charged to this socket until the
# line sends them: room for all of them, so that the send never blocks
s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 256 << 20)
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(1500)
n = 0
while n < most:
    try:
        s.send(frame)
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        break
    n += 1
print(n)
