#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Both modules load, create what they provide, and unload cleanly.

. "$(dirname "$0")/lib.sh"
require_root

load_module sch_pfifo_bulk
load_module refnic

check "refnic link added" ip link add pfbsmoke0 type refnic
defer "ip link del pfbsmoke0"
check "refnic link up" ip link set pfbsmoke0 up
check "pfifo_bulk added as root" tc qdisc add dev pfbsmoke0 root handle 1: pfifo_bulk
# text output: without the tc plugin, tc -j prints our options as invalid JSON
check "root qdisc kind" eval "tc qdisc show dev pfbsmoke0 | grep -q '^qdisc pfifo_bulk 1: root'"
check "pfifo_bulk deleted" tc qdisc del dev pfbsmoke0 root
check "refnic link deleted" ip link del pfbsmoke0
check "sch_pfifo_bulk unloads" rmmod sch_pfifo_bulk
check "refnic unloads" rmmod refnic
check_eq "no module left" "$(lsmod | grep -cE '^(refnic|sch_pfifo_bulk) ')" 0
pfb_exit
