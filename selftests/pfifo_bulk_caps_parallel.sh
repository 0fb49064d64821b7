#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfifo_bulk_caps.sh in the multi-threaded TCG guest (TEST_PROGS_PARALLEL):
# there the senders really run at once on 4 vCPUs and race the consumer at
# the cap, which single-threaded TCG, one vCPU at a time, rarely does. No
# tracepoint can be switched on there: the caps are checked from the
# qdisc's xstats and refnic's packets-per-doorbell histogram.
exec "$(dirname "$0")/pfifo_bulk_caps.sh"
