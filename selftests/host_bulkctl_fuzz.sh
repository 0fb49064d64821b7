#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fuzz of bulkctl's argument parser on the host: thousands of random argument
# vectors (selftests/bulkctl_fuzz.py) against bulkctl built with ASan and
# UBSan. Proves that no argument vector crashes it, trips a sanitizer, hangs,
# or ends with an exit status other than 0, 1 or 2, and that every exit 1
# comes with a one-line "bulkctl: ..." message. Bounded by its count of
# runs, not by time: all of them must run. The time limit only stops a
# fuzz that hangs: 1,000 runs took 90 s with this host at load 8 (guests
# and builds beside it), and 790 ran in 25 s on one loaded by make check
# and another guest; 600 s leaves a factor of six over the slowest seen.
#
# Nothing reaches the host kernel's qdiscs: as root the fuzz runs as nobody
# in a fresh network namespace (requests that parse get EPERM; only lo
# exists). Without root it runs as the caller, who has no CAP_NET_ADMIN.
#
#   selftests/host_bulkctl_fuzz.sh [RUNS [SEED]]	(default 1000 runs, seed = time)

. "$(dirname "$0")/lib.sh"
require_cmd python3

runs=${1:-1000}
seed=${2:-$(date +%s)}
bin=$PFB_TOP/tools/bulkctl/bulkctl.san
if ! make -s -C "$PFB_TOP/tools/bulkctl" bulkctl.san >/dev/null 2>&1; then
	echo "# no sanitizer build here; fuzzing the plain binary"
	make -s -C "$PFB_TOP/tools/bulkctl" bulkctl >/dev/null || exit 1
	bin=$PFB_TOP/tools/bulkctl/bulkctl
fi

# The sandboxed user must be able to run python without root's environment.
py=$(command -v /usr/bin/python3 || command -v python3)
if [ "$(id -u)" -eq 0 ]; then
	sandbox=(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups
		 --inh-caps=-all)
else
	sandbox=()
fi

out=$("${sandbox[@]}" "$py" "$PFB_TOP/selftests/bulkctl_fuzz.py" "$bin" "$runs" "$seed" "${PFB_FUZZ_SECS:-600}" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check_eq "fuzz of $(basename "$bin") (seed $seed) found no bad run" "$rc" 0
n=$(echo "$out" | sed -n 's/.*: \([0-9]*\) runs.*/\1/p')
check_eq "fuzz: all $runs runs ran" "${n:-0}" "$runs"
pfb_exit
