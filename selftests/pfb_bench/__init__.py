# SPDX-License-Identifier: GPL-2.0
"""The pfifo_bulk benchmark: pfifo_bulk against its bulk-off baseline and the
stock qdiscs (pfifo, pfifo_fast, fq_codel, fq), on refnic and on the VM's
real NIC, in the style of the 2014 bulk-dequeue threads.

Regimes (--regime; every table names its own):
  interleaved  single-threaded TCG, tools/vm/run's default: one vCPU runs at
               a time, so the sender that enqueues usually runs the qdisc
               itself and queues stay short. Counts and times.
  parallel     multi-threaded TCG (PFB_VM_TCG_THREAD=multi tools/vm/run -c 4):
               the vCPUs run at once, senders contend, queues build. Patching
               kernel text there (kprobes, enabling a tracepoint) has crashed
               guests, so only times are taken, batches come from the qdisc's
               own xstats and refnic's ethtool -S, and perf samples with
               cpu-clock (an hrtimer; nothing is patched). The TSC is kept
               off the clocksource watchdog (tools/vm/run's tsc=reliable),
               whose verdict on a busy host would flip a static key; the
               report lists any kernel function patched during the run.
  native       a real host (-d DEV): counts and times.

Every configuration runs alternately in one session (A B C, B C A, ...), N
repetitions of S seconds. A count phase (kprobes on the spin-lock functions
and the qdisc:qdisc_dequeue histogram, all switched on once) and a time phase
(no probes: pps, busy CPU per packet, service demand, latency) are separate,
so the probes' cost stays out of the times. Then perf record -e cpu-clock of
some configurations per scenario, perf diff and the lock symbols ranked.

Definitions (shared/DESIGN.md), per measurement window:
  offered    packets handed to the qdisc: its sent + dropped + backlog growth
  sent       the device's tx_packets; pps = sent / seconds
  dropped    the qdisc's drops
  lock, trylock, lock_bh, irqsave, lock_irq, trylock_bh
             calls of _raw_spin_lock, _raw_spin_trylock, _raw_spin_lock_bh,
             _raw_spin_lock_irqsave, _raw_spin_lock_irq, _raw_spin_trylock_bh
             (kprobe hits, all CPUs), per sent and per offered packet;
             combined = the sum of all six (a lockless qdisc moves lock work
             into trylocks; the _bh and _irqsave forms are on the path too)
  mean batch the qdisc:qdisc_dequeue events of the device (ifindex, unique
             across the namespaces of the run) and qdisc (handle 1:) that
             carry an skb (skbaddr != 0: the dequeue that ends every qdisc
             run finds nothing; 6.1 and 6.12 record it with packets 0, and
             a mean over all events counts it as an empty batch): packets
             per event, less one event of 1 per requeue (a packet the driver
             handed back leaves alone from the core's requeue list, counted
             already). For pfifo_bulk also its own xstats (batch_pkts/batches),
             which must agree within 5 %. pfifo_bulk, pfifo, pfifo_fast and
             fq_codel send a packet that finds their queue empty straight to the
             driver (TCQ_F_CAN_BYPASS), unseen by the tracepoint: "bypassed"
             is that share of the qdisc's packets, "batch (+bypass)" the
             mean counting each of them as a batch
  doorbells/pkt  refnic tx_doorbells (ethtool -S) / sent; virtio_net's TX
             kicks (ethtool -S, tx_queue_N_kicks on 6.1, txN_kicks on 6.12,
             summed over the TX queues) / sent; none for other drivers
  segs/pkt, doorbells/seg
             with TSO frames (scenario tso): refnic tx_segments / sent,
             tx_doorbells / tx_segments
  CPU ns/pkt busy time from /proc/stat (all CPUs) / sent packets
  pktgen runs/frame, pktgen ns/frame
             paced loads: times pktgen's threads went onto a CPU, and their
             CPU time (/proc/PID/schedstat), per frame pktgen made. A thread
             that sleeps out every delay runs about once per frame; well
             under 1, it busy-waited for most frames, and busy CPU per
             packet measures pktgen's waiting more than the transmit path
  service demand  busy CPU us per MB received (tcp)
  held, released by pkts, released by timer, sent at once
             pfifo_bulk's coalescing xstats per run (coalesce configurations):
             batches held back, holds ended because coalesce_pkts waited or
             by the timer, batches sent at once (their first packet came a
             window or more after the one before)
  held mean us, held max us
             how long a held batch's oldest packet waited: held_ns / holds
             released, and held_ns_max (a fresh qdisc per run: the run's)
Ratios candidate/base are ratios of means with a 95 % confidence interval
(delta method on the log scale, Welch's df, Student's t: stats.py says why);
a ratio whose interval is wider than +-2 % (--margin) prints as "not
resolved (+-X %)", never as a number; a target is met only when the whole
interval clears it, a regression is listed only when the whole interval is
worse by > 1 %.

The cost regime (--cost; boot the guest with PFB_VM_ICOUNT=1 tools/vm/run,
so that guest time counts instructions and the host's load drops out):
refnic CPU-bound, pktgen 64 B, pfifo_bulk against pfifo, pfifo_fast,
fq_codel and fq. A run sends a fixed number of packets (--count) and takes
pktgen's own time for them, with nothing else running in the guest (no
command, no console line: log lines wait until the phase ends). The time
phase begins with a pilot (--pilot rounds), computes from the spread it saw
how many runs each configuration needs for every pps ratio's interval to be
within +-margin, runs them (alternating, as always), plans again from all
runs if the interval is still wider, and stops when resolved, at --max-runs
or at --budget; the report says which, with the spreads and the runs needed.

refnic's doorbell costs what its module parameter doorbell_ns says; when the
module leaves it at 0 (a free doorbell), the benchmark sets 1000 ns, about a
trapped MMIO write in a guest (--doorbell-ns). Tables and results.json say
which cost the run used.

What coalescing buys (load paced64, configurations coalesce and coalesce50):
pktgen queue_xmit 64 B frames as pktgen64, each thread waiting gap x CPUs
between its frames (pktgen "delay"), so that all together send a frame
every --pace-gap-us (default 100 us: 10,000 frames/s, a quarter to an
eighth of what a 2-vCPU TCG guest sends flat out). Nothing builds a
backlog: every qdisc sends each packet alone, a doorbell each, unless it
holds them back. pktgen busy-waits for a delay under 100 us and sleeps
above: a pace whose delay per thread is under 100 us is refused, since busy
CPU per packet would then measure pktgen's waiting. That is not enough
under TCG, where timers fire late: a thread woken late is behind its
schedule and busy-waits whenever less than 100 us of a delay is left;
"pktgen runs/frame" shows how often it slept (0.04-0.33 measured: read
doorbells, holds and latency there, busy CPU on KVM or a real host).
coalesce is pfifo_bulk coalesce_usecs W coalesce_pkts 8, W = --coalesce-usecs (default 8 x the
gap, what 8 frames take at the pace, so that a batch of 8 can form in the
window); coalesce50 has the 50 us window an operator of a fast host would
set, which under TCG at this pace holds little (its frames come more than
50 us apart: sent at once). Run it in the scenarios cpu-bound (refnic's
doorbell costs) and nic (virtio_net kicks), and the load rr with the same
configurations for what the window costs in latency; the ratios compare
coalesce with pfifo_bulk, pfifo and pfifo_fast, coalesce50 with pfifo_bulk:
  bulk_bench.sh -s cpu-bound -l paced64,rr -c pfifo_bulk,coalesce,coalesce50,pfifo,pfifo_fast

--dump-check: pfifo_bulk alone, with "tc -s qdisc show" of its device in a
tight loop beside the load, and with the same loop on an idle pfifo_bulk of
another device (the loop's own CPU cost, none of it on the loaded qdisc).

Runs inside the VM (tools/vm/run) on refnic devices it creates and, with
-d auto, on the VM's NIC (tools/vm/run -n virtio|e1000e|vmxnet3, a
backend that reaches no network); on a real host with -d DEV. --headline
merges the results of several runs into one table and plot (on the host,
no root).
"""

# The package, by concern (each module says what it holds):
#   defs       configurations, scenarios, loads, figures, ratios, targets
#   system     the guest: commands, modules, the doorbell, the NIC, kernel text
#   probes     kprobes, the tracepoint, counters; the figures of a measurement
#   scenarios  Bench: devices, qdiscs, loads, one measurement
#   stats      means, ratios with intervals, runs needed, targets, regressions
#   runs       the schedule: rounds alternated, the cost regime's pilot and plan
#   perf       perf record and perf diff
#   report     the text tables
#   plots      gnuplot, and the headline over several runs
#   cli        options, the run, the outputs (bulk_bench.py calls its main)
