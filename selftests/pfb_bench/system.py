# SPDX-License-Identifier: GPL-2.0
"""The guest as the benchmark sees it: shell commands, sysfs and procfs,
the modules under test, refnic's doorbell cost, the real NIC, and whether
kernel text was patched (unsafe on multi-threaded TCG)."""

import bisect
import glob
import os
import re
import struct
import subprocess
import sys
import time

from .defs import DOORBELL_NS, LOCKED_REV, QDISC_MODULE, REFNIC_PARAMS, TOP


STARTED = time.time()
# While measuring in the cost regime, log lines wait here: a line on the
# console is host I/O (the guest's serial port), and its interrupts would
# land inside the next measurement at a time the host chooses.
HELD = None


def log(msg):
    line = "[%4.0f s] %s" % (time.time() - STARTED, msg)
    if HELD is not None:
        HELD.append(line)
        return
    print(line, file=sys.stderr, flush=True)


def hold_log(hold):
    """hold_log(True): log lines are kept in memory; hold_log(False): the
    kept lines are written, and log writes at once again."""
    global HELD
    lines, HELD = HELD or [], [] if hold else None
    for line in lines:
        print(line, file=sys.stderr)
    sys.stderr.flush()


def sh(cmd, check=True, ns=None):
    if ns:
        cmd = "ip netns exec %s %s" % (ns, cmd)
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError("%s: %s" % (cmd, r.stderr.strip()))
    return r.stdout


def write(path, text):
    with open(path, "w") as f:
        f.write(text + "\n")


def append(path, text):
    """Append to a tracefs control file: no seek (tracefs refuses it), no
    truncation (it would remove the other triggers)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read(path):
    with open(path) as f:
        return f.read()


def vermagic(path):
    """The kernel release a module is built for, None if it is none."""
    out = sh("modinfo -F vermagic %s" % path, check=False).split()
    return out[0] if out else None


def module_cmd(name, ko):
    """Loads PFB_MODULES_DIR/NAME.ko (as the selftests do: make check
    builds each kernel's modules outside the checkout), else the
    checkout's module, when built for this kernel; else the installed
    one."""
    for path in (os.path.join(os.environ.get("PFB_MODULES_DIR") or "/nonexistent",
                              name + ".ko"), os.path.join(TOP, ko)):
        if os.path.exists(path) and vermagic(path) == os.uname().release:
            return "insmod %s" % path
    return "modprobe %s" % name


def loaded(name):
    return bool(re.search(r"^%s " % name, read("/proc/modules"), re.M))


def load_modules():
    for name, ko in (QDISC_MODULE, ("refnic", "drivers/net/refnic/refnic.ko")):
        if not loaded(name):
            sh(module_cmd(name, ko))
    sh("modprobe pktgen")


def set_doorbell(ns_wanted):
    """refnic's doorbell cost for this run: ns_wanted, or the module's
    default, or DOORBELL_NS when that is 0. Returns (ns, origin)."""
    path = os.path.join(REFNIC_PARAMS, "doorbell_ns")
    default = int(read(path))
    if ns_wanted is None and default:
        return default, "refnic's default"
    ns = DOORBELL_NS if ns_wanted is None else ns_wanted
    write(path, str(ns))
    if int(read(path)) != ns:
        raise RuntimeError("refnic refused doorbell_ns %d" % ns)
    return ns, ("--doorbell-ns" if ns_wanted is not None else
                "set by the benchmark: refnic's default is 0")


def default_locked_ko():
    return os.path.join(TOP, ".build", "rev-" + LOCKED_REV, os.uname().release,
                        "sch_pfifo_bulk.ko")


def locked_origin(path):
    """The module and, from make rev-modules, its commit."""
    try:
        commit = read(os.path.join(os.path.dirname(os.path.dirname(path)), "commit")).strip()
    except OSError:
        commit = None
    return {"ko": path, "commit": commit}


def locked_ko_problem(path):
    """Why PATH cannot serve as pfb_locked, or None."""
    if not os.path.exists(path):
        return "no %s: build it on the host with 'make rev-modules REV=%s'" % (path, LOCKED_REV)
    magic = vermagic(path)
    if not magic:
        return "%s is not a kernel module" % path
    if magic != os.uname().release:
        return "%s is built for %s, not for the running %s" % (path, magic, os.uname().release)
    return None


def prime_flow_hash():
    """The first flow hash the kernel computes switches a static key on
    (net_get_random_once(): kernel text patched, which multi-threaded TCG
    may run stale). fq_codel and fq hash every packet they queue, and the
    core hashes one to pick among several TX queues: done before any
    measurement, by 4 frames that carry no hash yet (AF_PACKET; a UDP
    socket's carry the socket's) on a veth with two TX queues made for
    it. Not through fq_codel on the device under test: on 7.3 frames that
    find it empty leave without its enqueue (new_flow_count stays 0),
    unhashed, and the key switched under the first fq_codel measurement
    of a refnic run (flow_hash_from_keys patched)."""
    a, b = "pfbhash0", "pfbhash1"
    sh("ip link add %s numtxqueues 2 type veth peer name %s" % (a, b))
    try:
        for dev in (b, a):
            sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1" % dev, check=False)
            sh("ip link set %s up" % dev)
        sh("python3 %s %s 4" % (os.path.join(TOP, "selftests", "pfb_pktsend.py"), a))
    finally:
        sh("ip link del %s" % a)


def kernel_text():
    """(address of _stext, bytes up to _etext) read from /proc/kcore, None
    when unreadable. The parallel regime relies on nothing patching kernel
    text while the vCPUs run at once: comparing two snapshots shows what
    was patched in between (perf record -e cpu-clock patches nothing; a
    kprobe, an enabled tracepoint, a static key flipped does)."""
    try:
        addr = {}
        with open("/proc/kallsyms") as f:
            for line in f:
                a, _, name = line.split()[:3]
                if name in ("_stext", "_etext"):
                    addr[name] = int(a, 16)
        start, end = addr["_stext"], addr["_etext"]
        with open("/proc/kcore", "rb") as f:
            hdr = f.read(64)
            phoff = struct.unpack_from("Q", hdr, 32)[0]
            phentsize, phnum = struct.unpack_from("HH", hdr, 54)
            for i in range(phnum):
                f.seek(phoff + i * phentsize)
                ptype, _, off, vaddr, _, size = struct.unpack("IIQQQQ", f.read(40))
                if ptype == 1 and vaddr <= start < vaddr + size:	# PT_LOAD
                    f.seek(off + start - vaddr)
                    return start, f.read(end - start)
    except (OSError, KeyError, ValueError, struct.error):
        return None
    return None


def text_changes(a, b):
    """The functions whose text differs between snapshots a and b, None
    when either is missing."""
    if not a or not b:
        return None
    start, x = a
    y = b[1]
    changed = []
    for i in range(0, len(x), 4096):
        if x[i:i + 4096] == y[i:i + 4096]:
            continue
        for j in range(i, min(i + 4096, len(x))):
            if x[j] != y[j]:
                changed.append(start + j)
    if not changed:
        return []
    syms = []
    with open("/proc/kallsyms") as f:
        for line in f:
            a_, t, name = line.split()[:3]
            if t in "tT":
                syms.append((int(a_, 16), name))
    syms.sort()
    addrs = [x_ for x_, _ in syms]
    out = []
    for c in changed:
        i = bisect.bisect_right(addrs, c) - 1
        name = syms[i][1] if i >= 0 else hex(c)
        if name not in out:
            out.append(name)
    return out


CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0"


def quiet_clocksource_watchdog():
    """Parallel regime: keep the kernel from patching its own text. The
    clocksource watchdog checks the TSC against HPET (or jiffies) every
    0.5 s; on a busy host a vCPU stalls between the reads, the TSC is
    marked unstable, and that flips the sched_clock_stable static key:
    text patched under running vCPUs ("Oops: int3" in sched_clock_cpu, seen
    on 6.12). tools/vm/run boots its multi-threaded guests with
    tsc=reliable, which keeps the TSC off the watchdog from the start.
    Elsewhere, unbinding the TSC as a clocksource takes it off the watchdog
    (timekeeping moves to HPET, as 6.1 does by itself under TCG; sched_clock
    still reads the TSC) and patches nothing, but every clock read is then
    an emulated device's. Returns (clocksource in use afterwards,
    [unbound])."""
    try:
        if "tsc=reliable" in read("/proc/cmdline").split():
            # tools/vm/run's multi-threaded guests: no watchdog on the TSC
            unbound = []
        elif "tsc" in read(CLOCKSOURCE + "/available_clocksource").split():
            write(CLOCKSOURCE + "/unbind_clocksource", "tsc")
            unbound = ["tsc"]
        else:
            unbound = []
        return read(CLOCKSOURCE + "/current_clocksource").strip(), unbound
    except OSError as e:
        log("bench: cannot unbind the tsc clocksource: %s" % e)
        return None, []


def load_nic_drivers():
    """No udev in the VM: load the drivers of its network devices (PCI
    class 02, virtio device 1) by their modalias."""
    aliases = [read(os.path.join(d, "modalias")).strip()
               for d in glob.glob("/sys/bus/pci/devices/*")
               if read(os.path.join(d, "class")).startswith("0x02")]
    aliases += [read(os.path.join(d, "modalias")).strip()
                for d in glob.glob("/sys/bus/virtio/devices/*")
                if read(os.path.join(d, "device")).strip() == "0x0001"]
    for a in aliases:
        sh("modprobe -q '%s'" % a, check=False)


def find_nic():
    """The first network device on a bus (PCI, virtio), after loading its
    driver; None without one."""
    load_nic_drivers()
    for _ in range(20):
        for d in sorted(glob.glob("/sys/class/net/*")):
            if os.path.exists(os.path.join(d, "device")):
                return os.path.basename(d)
        time.sleep(0.1)
    return None
