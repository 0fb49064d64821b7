# SPDX-License-Identifier: GPL-2.0
"""Scenarios and loads: the refnic devices and the real NIC, the qdisc
under test, pktgen, UDP, TCP and request/response, and one measurement."""

import glob
import json
import os
import re
import subprocess
import threading
import time

from .defs import (CONFIGS, DUMP_LOOP, HANDLE, IDLE_DEV, NIC_DST, NIC_SRC, OFFLOAD_LOADS,
                   OFFLOAD_SCENARIOS, PAIR_ONLY, PKTGEN, PKTGEN_LOADS, QDISC_MODULE, SCENARIOS,
                   TOP, VIRTIO_KICKS)
from .system import loaded, log, module_cmd, prime_flow_hash, read, sh, write
from .probes import (busy_jiffies, ethtool_stats, figures, link_stat, pace_delay_ns, pktgen_elapsed,
                     pktgen_threads, qdisc_stats, schedstat)


def tx_queues(dev, ns=None):
    """How many TX queues DEV has (sysfs, seen from its namespace)."""
    return len([q for q in sh("ls /sys/class/net/%s/queues" % dev, ns=ns).split()
                if q.startswith("tx-")])


def pktgen_remove_all(secs=20):
    """Every pktgen device stopped and removed, no removal left pending
    (selftests/lib.sh: pktgen_remove_all). Not "reset": it flags every
    thread and waits 125 ms, and a thread that takes its flag later
    removes the devices added after it. Only the threads that have devices
    are asked here, and each is waited for until it has none."""
    threads = glob.glob("%s/kpktgend_*" % PKTGEN)

    def having(state):
        return [t for t in threads if re.search(r"^%s: +\S" % state, read(t), re.M)]

    def wait_none(state):
        end = time.time() + secs
        while having(state):
            if time.time() > end:
                raise RuntimeError("pktgen: devices still %s after %d s" % (state, secs))
            time.sleep(0.1)

    if having("Running"):
        write("%s/pgctrl" % PKTGEN, "stop")
        wait_none("Running")
    for t in having("(Running|Stopped)"):
        write(t, "rem_device_all")
    wait_none("(Running|Stopped)")


class Bench:
    def __init__(self, args):
        self.args = args
        self.ncpu = os.cpu_count()
        self.dev = "pfbb0"			# refnic for pktgen and udp
        self.pair = ("pfbb1", "pfbb1p")		# refnic pair across namespaces
        self.ns = ("pfbbA", "pfbbB")
        self.nic = args.dev			# the real NIC, or None
        self.nic_added = []			# what setup added to it
        self.nic_kicks = False			# its ethtool -S counts doorbells
        self.need_refnic = any(s != "nic" for s in args.scenarios)
        self.need_pair = self.need_refnic and any(l in ("udp",) + PAIR_ONLY for l in args.loads)
        # how to load each sch_pfifo_bulk, and which one is loaded
        self.pfb_cmd = {"checkout": module_cmd(*QDISC_MODULE),
                        "checkout_locked": module_cmd(*QDISC_MODULE) + " lockless=0",
                        "checkout_lockless": module_cmd(*QDISC_MODULE) + " lockless=1",
                        "locked": "insmod %s" % args.locked_ko}
        self.pfb = "checkout"
        self.background = None
        self.pg_dev = None			# the device pktgen's threads send on
        self.ifindex = {}			# of every device under test
        # tc and ip plugins of this checkout, when built
        for env, d, so in (("TC_LIB_DIR", "tc-plugin", "q_pfifo_bulk.so"),
                           ("IP_LIB_DIR", "ip-plugin", "link_refnic.so")):
            if os.path.exists(os.path.join(TOP, d, so)):
                os.environ[env] = os.path.join(TOP, d)

    # devices
    def setup(self):
        if self.need_refnic:
            sh("ip link add %s type refnic" % self.dev)
            self.quiet(self.dev)
            sh("ip link set %s up" % self.dev)
        if self.need_pair:
            a, b = self.ns
            sh("ip netns add %s" % a)
            sh("ip netns add %s" % b)
            # made in this namespace, then moved: a device keeps its
            # ifindex, so no two devices of the run share one (the
            # tracepoint knows the ifindex, not the namespace)
            sh("ip link add %s type refnic peer name %s" % self.pair)
            sh("ip link set %s netns %s" % (self.pair[0], a))
            sh("ip link set %s netns %s" % (self.pair[1], b))
            sh("ip addr add 10.77.0.1/24 dev %s" % self.pair[0], ns=a)
            sh("ip addr add 10.77.0.2/24 dev %s" % self.pair[1], ns=b)
            for i, n in enumerate(self.ns):
                self.quiet(self.pair[i], n)
                sh("ip link set lo up", ns=n)
                sh("ip link set %s up" % self.pair[i], ns=n)
            # static neighbours: no ARP traffic inside a measurement
            for i, n in enumerate(self.ns):
                other = self.pair[1 - i]
                mac = sh("cat /sys/class/net/%s/address" % other, ns=self.ns[1 - i]).strip()
                sh("ip neigh replace 10.77.0.%d lladdr %s dev %s nud permanent" %
                   (2 - i, mac, self.pair[i]), ns=n)
        if self.nic:
            self.setup_nic()
        prime_flow_hash()

    def quiet(self, dev, ns=None):
        """No IPv6 on a device under test: no router solicitations or DAD
        inside a measurement."""
        sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1" % dev, check=False, ns=ns)

    def setup_nic(self):
        """The real NIC up, with carrier (e1000e needs about 2 s), and a
        route to a neighbour that does not exist (NIC_DST)."""
        dev = self.nic
        self.quiet(dev)
        sh("ip link set %s up" % dev)
        for _ in range(100):
            if read("/sys/class/net/%s/carrier" % dev).strip() == "1":
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("%s: no carrier after 10 s" % dev)
        if "inet " not in sh("ip -4 addr show dev %s" % dev):
            sh("ip addr add %s/32 dev %s" % (NIC_SRC, dev))
            self.nic_added.append("ip addr del %s/32 dev %s" % (NIC_SRC, dev))
        sh("ip route replace %s/32 dev %s" % (NIC_DST, dev))
        self.nic_added.append("ip route del %s/32 dev %s" % (NIC_DST, dev))
        sh("ip neigh replace %s lladdr %s dev %s nud permanent" %
           (NIC_DST, self.args.dst_mac, dev))
        self.nic_added.append("ip neigh del %s dev %s" % (NIC_DST, dev))
        # its doorbells, when the driver counts them (virtio_net's kicks);
        # ethtool -S only then, so that other drivers' runs stay as they were
        self.nic_kicks = any(VIRTIO_KICKS.match(k) for k in ethtool_stats(dev))

    def nic_info(self):
        """Driver, its version and whether it runs BQL (the limit BQL
        computed moved from 0: the driver reports completions)."""
        if not self.nic:
            return None
        info = {}
        for line in sh("ethtool -i %s" % self.nic, check=False).splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
        bql = glob.glob("/sys/class/net/%s/queues/tx-*/byte_queue_limits/limit" % self.nic)
        info["bql"] = any(int(read(p)) > 0 for p in bql)
        info["txqs"] = tx_queues(self.nic)
        info["doorbells"] = ("TX kicks (ethtool -S, summed over the TX queues)"
                             if self.nic_kicks else None)
        return info

    def teardown(self):
        self.stop_background()
        try:
            pktgen_remove_all()
        except (OSError, RuntimeError) as e:
            log("teardown: %s" % e)
        for n in self.ns:
            sh("ip netns del %s" % n, check=False)
        if self.need_refnic:
            sh("ip link del %s" % self.dev, check=False)
        if self.nic:
            sh("tc qdisc del dev %s root" % self.nic, check=False)
            for cmd in reversed(self.nic_added):
                sh(cmd, check=False)

    def refnic_mode(self, dev, ns, bql, rate, offloads):
        # refnic's BQL switch is in debugfs, which is not per namespace:
        # written from here whatever namespace the device is in
        write("/sys/kernel/debug/refnic/%s/bql" % dev, "1" if bql else "0")
        sh("ethtool -K %s tso %s sg %s tx %s" % ((dev,) + ("on" if offloads else "off",) * 3),
           ns=ns)
        sh("ethtool -s %s speed %d" % (dev, rate), ns=ns)
        # At a low line rate, completions coalesced as a real NIC does (16
        # frames or 10 ms): one completion per frame frees one slot at a
        # time, and BQL then never has room for a batch.
        if rate:
            sh("ethtool -C %s tx-usecs 10000 tx-frames 16" % dev, ns=ns)
        else:
            sh("ethtool -C %s tx-usecs 0 tx-frames 1" % dev, ns=ns)

    def scenario(self, name):
        if name == "nic":
            return
        bql, rate, _ = SCENARIOS[name]
        offloads = name in OFFLOAD_SCENARIOS
        self.refnic_mode(self.dev, None, bql, rate, offloads)
        if self.need_pair:
            self.refnic_mode(self.pair[0], self.ns[0], bql, rate, offloads)
            # the receiver's ACKs and the sender's frames alike
            sh("ethtool -K %s tso %s sg %s tx %s" % ((self.pair[1],) + (
                "on" if offloads else "off",) * 3), ns=self.ns[1])

    def applies(self, scen, load):
        if scen in OFFLOAD_SCENARIOS:
            return load in OFFLOAD_LOADS
        return not (scen == "nic" and load in PAIR_ONLY)

    def target(self, scen, load):
        """(device, namespace) the qdisc under test sits on."""
        if scen == "nic":
            return self.nic, None
        if load in PKTGEN_LOADS:
            return self.dev, None
        return self.pair[0], self.ns[0]

    def use_module(self, which):
        """Have the checkout's sch_pfifo_bulk ("checkout", its default mode;
        "checkout_locked": with lockless=0; "checkout_lockless": with
        lockless=1) or the older revision's ("locked") loaded. Each
        registers pfifo_bulk, and the mode is read at load only: our qdiscs
        go, one module out, the other in."""
        if which == self.pfb:
            return
        for dev, ns, there in ((self.dev, None, self.need_refnic),
                               (self.pair[0], self.ns[0], self.need_pair),
                               (self.nic, None, self.nic)):
            if there:
                sh("tc qdisc del dev %s root" % dev, check=False, ns=ns)
        name = QDISC_MODULE[0]
        for _ in range(50):
            sh("rmmod %s" % name, check=False)
            if not loaded(name):
                break
            time.sleep(0.1)		# a qdisc still going away holds it
        else:
            raise RuntimeError("cannot unload %s (a pfifo_bulk qdisc outside the bench?)" % name)
        self.pfb = None
        sh(self.pfb_cmd[which])
        self.pfb = which
        log("bench: %s: %s" % (which, self.pfb_cmd[which]))

    def set_qdisc(self, dev, ns, config):
        """A fresh qdisc for every measurement, never a change of the last.
        On a device of several TX queues: mq, and the configuration on
        every queue, as net.core.default_qdisc gives them. A root qdisc
        there is not TCQ_F_ONETXQUEUE, and the core would batch up to 9
        packets for every qdisc alike (try_bulk_dequeue_skb_slow())."""
        if CONFIGS[config].split()[0] == "pfifo_bulk":
            self.use_module({"pfb_locked": "locked",
                             "pfifo_bulk_locked": "checkout_locked",
                             "pfifo_bulk_lockless": "checkout_lockless"}.get(config, "checkout"))
        sh("tc qdisc del dev %s root" % dev, check=False, ns=ns)
        txqs = tx_queues(dev, ns)
        if txqs == 1:
            sh("tc qdisc add dev %s root handle %s %s" % (dev, HANDLE, CONFIGS[config]), ns=ns)
            return
        sh("tc qdisc add dev %s root handle %s mq" % (dev, HANDLE), ns=ns)
        for q in range(1, txqs + 1):
            sh("tc qdisc replace dev %s parent %s%x %s" % (dev, HANDLE, q, CONFIGS[config]),
               ns=ns)

    def wait_settled(self, dev, ns, limit=5.0):
        """Until the device's tx_packets stood still for 0.3 s (the last
        run's frames on the ring are sent), at most LIMIT seconds."""
        last, still, t0 = link_stat(dev, "tx_packets", ns), 0, time.time()
        while still < 3 and time.time() - t0 < limit:
            time.sleep(0.1)
            now = link_stat(dev, "tx_packets", ns)
            still = still + 1 if now == last else 0
            last = now

    # the "tc -s qdisc show" loop beside a load
    def start_background(self, config, dev, ns):
        which = DUMP_LOOP.get(config)
        if not which:
            return
        target = dev if which == "dev" else IDLE_DEV
        if which == "idle":
            sh("ip link add %s type refnic" % IDLE_DEV, check=False, ns=ns)
            sh("ip link set %s up" % IDLE_DEV, ns=ns)
            sh("tc qdisc replace dev %s root handle 1: pfifo_bulk" % IDLE_DEV, ns=ns)
        pre = ["ip", "netns", "exec", ns] if ns else []
        # tc -batch: one process, one dump per line, as fast as tc goes;
        # its output (one root qdisc line per dump, whatever mq has under
        # it) counts the dumps afterwards
        batch = "/tmp/pfb-bench-dump.batch"
        with open(batch, "w") as f:
            f.write(("qdisc show dev %s\n" % target) * 200000)
        out = open("/tmp/pfb-bench-dump.out", "w")
        tc = subprocess.Popen(pre + ["tc", "-s", "-batch", batch], stdout=out,
                              stderr=subprocess.DEVNULL)
        self.background = (tc, out, ns if which == "idle" else False, time.time())

    def stop_background(self):
        """Stops the loop; dumps per second, None without a loop."""
        if not self.background:
            return None
        tc, out, idle_ns, t0 = self.background
        self.background = None
        tc.terminate()
        tc.wait()
        secs = time.time() - t0
        out.close()
        with open(out.name) as f:
            dumps = sum(1 for line in f if line.startswith("qdisc") and " root " in line)
        if idle_ns is not False:
            sh("ip link del %s" % IDLE_DEV, check=False, ns=idle_ns)
        return dumps / secs

    # loads
    def pktgen_devices(self, dev):
        """One pktgen device per CPU on DEV, added once and kept while DEV
        stays the target: a device goes away only when its thread next
        runs, which took seconds with 4 vCPUs in parallel."""
        if self.pg_dev == dev:
            return
        self.pg_dev = None
        pktgen_remove_all()
        for c in range(self.ncpu):
            write("%s/kpktgend_%d" % (PKTGEN, c), "add_device %s@%d" % (dev, c))
        self.pg_dev = dev

    def pktgen(self, dev, size, secs, delay=0, count=None):
        """pktgen on every CPU for SECS, DELAY ns between each thread's
        frames (0: flat out); with COUNT, until the threads have sent COUNT
        frames together. Every option is set each time: the devices
        outlive a load (a paced one's delay would stay)."""
        self.pktgen_devices(dev)
        for c in range(self.ncpu):
            d = "%s/%s@%d" % (PKTGEN, dev, c)
            per_thread = count // self.ncpu + (c < count % self.ncpu) if count else 0
            for cmd in ("count %d" % per_thread, "pkt_size %d" % size, "delay %d" % delay,
                        "xmit_mode queue_xmit",
                        "burst 1", "clone_skb 0", "dst %s" % NIC_DST,
                        "dst_mac %s" % self.args.dst_mac):
                write(d, cmd)
        # Paced, a thread that sleeps out each delay goes onto its CPU once
        # per frame; pktgen busy-waits instead whenever less than 100 us of
        # the delay is left, also after a late wakeup (its schedule is
        # absolute): its switches and CPU time per frame say which it did.
        threads = pktgen_threads() if delay else []
        sched0 = schedstat(threads)
        out = self.pktgen_counted(secs) if count else self.pktgen_timed(secs)
        sched1 = schedstat(threads)
        offered = 0
        for c in range(self.ncpu):
            m = re.search(r"pkts-sofar:\s*(\d+)\s+errors:\s*(\d+)",
                          read("%s/%s@%d" % (PKTGEN, dev, c)))
            if m:
                offered += int(m.group(1)) + int(m.group(2))
        if count:
            out["window_s"] = pktgen_elapsed(dev, self.ncpu)
        out["pktgen_offered"] = offered
        if threads and offered:
            out["pg_cpu_ns_per_frame"] = (sched1[0] - sched0[0]) / offered
            out["pg_runs_per_frame"] = (sched1[1] - sched0[1]) / offered
        return out

    def pktgen_timed(self, secs):
        """pktgen started, stopped SECS later."""
        starter = threading.Thread(target=write, args=("%s/pgctrl" % PKTGEN, "start"))
        starter.start()
        time.sleep(secs)
        write("%s/pgctrl" % PKTGEN, "stop")
        starter.join()
        return {}

    def pktgen_counted(self, secs):
        """pktgen started; "start" returns when every thread has sent its
        count. Nothing else runs in the guest meanwhile (no command, no
        console line): the window holds the transmit path alone. Busy CPU
        is read right at its ends. A run 30 times longer than -t seconds is
        stopped and is an error (a device that stalled)."""
        busy0 = busy_jiffies()
        starter = threading.Thread(target=write, args=("%s/pgctrl" % PKTGEN, "start"))
        starter.start()
        starter.join(max(60.0, 30 * secs))
        busy1 = busy_jiffies()
        if starter.is_alive():
            write("%s/pgctrl" % PKTGEN, "stop")
            starter.join()
            raise RuntimeError("pktgen: --count not sent within %g s" % max(60.0, 30 * secs))
        return {"busy_jiffies": busy1 - busy0}

    def load_tool(self):
        return os.path.join(TOP, "selftests", "pfb_load")

    def peer_server(self, args, secs):
        """pfb_load ARGS in the peer namespace for SECS, given time to bind."""
        server = subprocess.Popen("ip netns exec %s %s %s -t %f" %
                                  (self.ns[1], self.load_tool(), args, secs),
                                  shell=True, stdout=subprocess.PIPE, text=True)
        time.sleep(0.3)
        return server

    def senders(self, ns, args, secs):
        """pfb_load ARGS once per CPU (pinned), all for SECS: their outputs."""
        pre = "ip netns exec %s " % ns if ns else ""
        procs = [subprocess.Popen("%staskset -c %d %s %s -t %f" %
                                  (pre, c, self.load_tool(), args, secs),
                                  shell=True, stdout=subprocess.PIPE, text=True)
                 for c in range(self.ncpu)]
        return [json.loads(p.communicate()[0] or "{}") for p in procs]

    def udp(self, scen, secs):
        if scen == "nic":
            self.senders(None, "stream -d %s -p 9 -s 64" % NIC_DST, secs)
            return {}
        sink = self.peer_server("sink -p 9200 -i 500", secs + 3)
        self.senders(self.ns[0], "stream -d 10.77.0.2 -p 9200 -s 64", secs)
        out = json.loads(sink.communicate()[0])
        return {"received": out["received"]}

    def tcp(self, secs):
        sink = self.peer_server("tcpsink -p 9202 -i 1000", secs + 5)
        sent = self.senders(self.ns[0], "tcpstream -d 10.77.0.2 -p 9202 -s 16384", secs)
        out = json.loads(sink.communicate()[0])
        # a flow that never connected leaves a figure of fewer flows than
        # the table says: that is an error, not a result
        flows = sum(1 for s in sent if "bytes" in s)
        if flows != self.ncpu or out["connections"] != self.ncpu:
            raise RuntimeError("tcp: %d of %d senders ran, the sink saw %d connections" %
                               (flows, self.ncpu, out["connections"]))
        return {"rcvd_bytes": out["bytes"]}

    def rr(self, secs):
        echo = self.peer_server("echo -p 9201", secs + 1)
        out = json.loads(sh("%s rr -d 10.77.0.2 -p 9201 -s 64 -t %f" %
                            (self.load_tool(), secs), ns=self.ns[0]))
        echo.communicate()
        return {k: out[k] for k in ("p50_us", "p90_us", "p95_us", "p99_us")}

    def run_load(self, scen, load, secs):
        dev, ns = self.target(scen, load)
        if load in PKTGEN_LOADS:
            size, paced = PKTGEN_LOADS[load]
            if paced:
                return self.pktgen(dev, size, secs, pace_delay_ns(self.args.pace_gap_us, self.ncpu))
            return self.pktgen(dev, size, secs, count=self.args.count)
        if load == "udp":
            return self.udp(scen, secs)
        if load == "tcp" and scen in OFFLOAD_SCENARIOS:
            return self.tcp(secs)		# GSO frames, TSO in the driver
        if load == "tcp":
            # one MSS per skb through the qdisc, as the 2014 figure's GSO off
            sh("ip link set %s gso_max_segs 1" % dev, ns=ns)
            try:
                return self.tcp(secs)
            finally:
                sh("ip link set %s gso_max_segs 65535" % dev, ns=ns)
        return self.rr(secs)

    # one measurement
    def snapshot(self, dev, ns, ifindex, probes):
        s = {"tx": link_stat(dev, "tx_packets", ns), "qdisc": qdisc_stats(dev, ns),
             "eth": ethtool_stats(dev, ns) if dev != self.nic or self.nic_kicks else {}}
        if probes:
            s["locks"], s["batches"] = probes.snapshot(ifindex)
        s["cpu"], s["t"] = busy_jiffies(), time.time()
        return s

    def measure(self, scen, load, config, secs, probes):
        dev, ns = self.target(scen, load)
        self.set_qdisc(dev, ns, config)
        self.wait_settled(dev, ns)
        ifindex = self.ifindex[dev]
        self.start_background(config, dev, ns)
        try:
            s0 = self.snapshot(dev, ns, ifindex, probes)
            extra = self.run_load(scen, load, secs)
            if "window_s" in extra:
                # a counted run's time is pktgen's: wait for the ring to
                # empty, so that sent counts every frame of the run
                self.wait_settled(dev, ns)
            s1 = self.snapshot(dev, ns, ifindex, probes)
            if "window_s" not in extra:
                # A timed run ends with the qdisc's backlog still draining
                # (fq_codel holds up to 10240 packets) while tc and ethtool
                # read: the driver's counters of s1 are not from the moment
                # of its tx_packets. The figures per sent packet of the
                # driver (doorbells, segments, stops) and of the requeues
                # come from a snapshot taken once the device is quiet.
                self.wait_settled(dev, ns)
                s1["drained"] = self.snapshot(dev, ns, ifindex, None)
        finally:
            dumps = self.stop_background()
        fig = figures(s0, s1, extra, load, probes is not None, dumps)
        if scen != "nic" and SCENARIOS[scen][1]:
            # a line slower than the senders: they spin on a full queue, and
            # busy CPU per packet measures that spinning, nothing else
            fig.pop("cpu_ns_per_pkt", None)
        return fig
