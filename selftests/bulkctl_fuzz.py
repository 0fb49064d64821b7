#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Random argument vectors for bulkctl: command words, option words, good and
# bad values, long and odd strings, in random order and number. Every run
# must end with exit 0, 1 or 2 and no sanitizer report; exit 1 must print
# exactly one "bulkctl: ..." line, or the usage when there is no command.
# Prints a summary; exits 1 on the first bad run, showing its argv, and
# when SECONDS pass before all RUNS ran: bounded by the count of runs, the
# time limit only stops a fuzz that hangs (host_bulkctl_fuzz.sh says why
# its 600 s leave room for a loaded host).
#
#   bulkctl_fuzz.py BULKCTL [RUNS] [SEED] [SECONDS]

import os
import random
import subprocess
import sys
import time

WORDS = ["add", "change", "replace", "del", "delete", "show", "watch", "help",
         "--help", "--version", "-h", "-V", "root", "parent", "handle",
         "limit", "bulk_bytes", "bulk_pkts", "mode", "-s", "-j", "-n",
         "-stats", "--json", "-netns", "dev", "file", "interval", "count",
         "lo", "nosuchdev0", "auto", "bql", "nobql", "-p", "-pretty", "list",
         "coalesce_usecs", "coalesce_pkts"]
VALUES = ["0", "1", "-1", "-0", "+5", "16777216", "16777217", "65536", "65537",
          "4294967295", "4294967296", "99999999999999999999", "1k", "1.5k",
          "64kb", "16m", "17m", "1g", "8kbit", "1mbit", "1gbit", "12parsecs",
          "0x10", "1e3", "1e400", "nan", "inf", "-inf", "1.5", "0.05", "3600",
          "3601", "1:", "1:2", "ffff:", "10000:", ":", "::", "1::", "root",
          ":1", "none", "0:", "800us", "1ms", "1.5s", "-5us", "0x400", "010",
          "", " ", "\t", "%s%n%x", "\\", "\"", "a" * 15, "a" * 16, "a" * 300,
          "é", "\x7f", "/dev/null", "/nonexistent"]


def rand_arg(rng):
    r = rng.random()
    if r < 0.45:
        return rng.choice(WORDS)
    if r < 0.9:
        return rng.choice(VALUES)
    n = rng.randrange(0, 40)
    return "".join(chr(rng.randrange(1, 256)) for _ in range(n))


def rand_argv(rng):
    argv = []
    while rng.random() < 0.3:
        argv.append(rng.choice(["-s", "-j", "-json", "-stats", "-n", "-V",
                                "-x", "--"]))
    if rng.random() < 0.9:
        argv.append(rng.choice(["add", "change", "replace", "del", "show",
                                "watch"]))
        if rng.random() < 0.8:
            argv.append(rng.choice(["lo", "nosuchdev0", "lo", "x" * 16]))
    argv += [rand_arg(rng) for _ in range(rng.randrange(0, 9))]
    return argv


def main():
    prog = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 600.0
    rng = random.Random(seed)
    env = dict(os.environ,
               ASAN_OPTIONS="exitcode=86:detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=87:print_stacktrace=1")
    codes = {}
    start = time.monotonic()
    n = 0
    while n < runs and time.monotonic() - start < limit:
        argv = [a.encode("utf-8", "surrogateescape") for a in rand_argv(rng)]
        # One run takes about 0.1 s under ASan at load 8 (90 s for 1,000):
        # 10 s is a hundred times that, so only a hang reaches it.
        try:
            p = subprocess.run([prog.encode()] + argv, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=10)
        except subprocess.TimeoutExpired:
            print(f"FAIL (hang) argv={argv!r}")
            return 1
        n += 1
        err = p.stderr.decode("utf-8", "replace")
        bad = None
        if p.returncode not in (0, 1, 2):
            bad = f"exit {p.returncode}"
        elif "Sanitizer" in err or "runtime error" in err:
            bad = "sanitizer report"
        elif p.returncode == 1:
            lines = err.rstrip("\n").split("\n")
            if lines[0].startswith("Usage: bulkctl"):
                pass
            elif (lines[0].startswith("Cannot open network namespace") or
                  lines[0].startswith("setting the network namespace")) \
                    and len(lines) == 1:
                pass    # iproute2's netns_switch() says why, in one line
            elif not lines[0].startswith("bulkctl: "):
                bad = "exit 1 without a bulkctl: message"
            elif len(lines) != 1:
                bad = "exit 1 with more than one line"
        if bad:
            print(f"FAIL ({bad}) argv={argv!r}\n{err}")
            return 1
        codes[p.returncode] = codes.get(p.returncode, 0) + 1
    print(f"seed {seed}: {n} runs, exit codes {dict(sorted(codes.items()))}")
    if n < runs:
        print(f"FAIL (time) {n} of {runs} runs in {limit:.0f} s: a run hangs, "
              "or the host is far slower than any seen")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
