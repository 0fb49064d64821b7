#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Sends 60-byte broadcast frames through a device's qdisc (AF_PACKET, so the
# frames take dev_queue_xmit), COUNT of them, or for SECONDS when COUNT is 0.
# With BURST, the frames go in bursts of BURST back to back, PAUSE seconds
# apart. Prints the number sent.
#
#   pfb_pktsend.py DEV COUNT [SECONDS [BURST PAUSE]]

import socket
import sys
import time

dev, count = sys.argv[1], int(sys.argv[2])
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 0
burst = int(sys.argv[4]) if len(sys.argv) > 4 else 0
pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(46)
n = 0
end = time.monotonic() + secs
while (count and n < count) or (not count and time.monotonic() < end):
    if burst and n and n % burst == 0:
        time.sleep(pause)
    try:
        s.send(frame)
        n += 1
    except BlockingIOError:
        pass
    except OSError as e:
        # ENOBUFS when the qdisc drops; the frame still went through it.
        if e.errno != 105:
            raise
        n += 1
print(n)
