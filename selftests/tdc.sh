#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tdc (tc-testing) cases in tdc/pfifo_bulk.json, run with tdc.py from the
# running kernel's own source (extracted by scripts/setup.sh), with the tc
# plugin of this checkout passed through tdc's environment config. Every
# case must pass. The cases want a root pfifo_bulk lockless (the default,
# as tc-testing runs them in a kernel tree); with the module loaded
# lockless=0 (PFB_LOCKLESS) the copy run here wants it locked instead.

. "$(dirname "$0")/lib.sh"
require_root
require_cmd python3
load_module sch_pfifo_bulk

rel=$(uname -r)
series=$(echo "$rel" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
src=${PFB_TDC_SRC:-/var/cache/pfifo-bulk/linux-source-$series/tools/testing/selftests/tc-testing}
[ -f "$src/tdc.py" ] || { echo "SKIP: no tdc.py for $series in $src (make setup)"; exit $ksft_skip; }
plugin=$PFB_TOP/tc-plugin/q_pfifo_bulk.so
[ -f "$plugin" ] || { echo "SKIP: tc plugin not built"; exit $ksft_skip; }

# tdc writes next to itself: work on a copy in tmpfs.
work=$(mktemp -d /tmp/pfb-tdc.XXXXXX)
defer "rm -rf $work"
cp -r "$src"/. "$work"/
mkdir -p "$work/tc-tests/pfifo_bulk"
cp "$PFB_TOP/selftests/tdc/pfifo_bulk.json" "$work/tc-tests/pfifo_bulk/"
if [ "$(qdisc_lockless)" = false ]; then
	sed -i -e 's/\\"lockless\\":true/\\"lockless\\":false/' \
		-e 's/\(root refcnt \[0-9\]+ .*effective_mode (bql|nobql)\) lockless/\1 locked/' \
		"$work/tc-tests/pfifo_bulk/pfifo_bulk.json"
	check_eq "locked: no case left that wants a lockless root" \
		"$(grep -c 'lockless\\":true\|(bql|nobql) lockless' "$work/tc-tests/pfifo_bulk/pfifo_bulk.json")" 0
fi
cat > "$work/tdc_config_local.py" <<PY
import os
ENVIR = os.environ.copy()
ENVIR['TC_LIB_DIR'] = '$(dirname "$plugin")'
PY

out=$(cd "$work" && python3 ./tdc.py -f tc-tests/pfifo_bulk/pfifo_bulk.json 2>&1)
echo "$out" | grep -E '^(ok|not ok|1\.\.)' | sed 's/^/tdc: /'
echo "$out" | grep -A12 '^not ok' | head -60
total=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" \
	"$PFB_TOP/selftests/tdc/pfifo_bulk.json")
check_cmp "at least 20 tdc cases" "$total" ">=" 20
check_eq "tdc cases passed" "$(echo "$out" | grep '^ok ' | grep -vc '# skipped')" "$total"
check_eq "tdc cases failed" "$(echo "$out" | grep -c '^not ok ')" 0
pfb_exit
