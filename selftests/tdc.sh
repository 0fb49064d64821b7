#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tdc (tc-testing) cases in tdc/pfifo_bulk.json, run with tdc.py from the
# running kernel's own source (extracted by scripts/setup.sh), with the tc
# plugin of this checkout passed through tdc's environment config. Every
# case must pass. The cases take a root pfifo_bulk in either mode, since
# tc-testing runs them with the module's default (lockless) and make check
# runs the newest kernel in both; the copy run here wants the mode the
# module was loaded in (PFB_LOCKLESS, or the default).

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
sed -i -e "s/\\\\\"lockless\\\\\":(true|false)/\\\\\"lockless\\\\\":$(qdisc_lockless)/" \
	-e "s/effective_mode (bql|nobql) (lockless|locked)/effective_mode (bql|nobql) $(qdisc_lock_word)/" \
	"$work/tc-tests/pfifo_bulk/pfifo_bulk.json"
check_eq "every root case wants the loaded mode, $(qdisc_lock_word)" \
	"$(grep -c '(true|false)\|(lockless|locked)' "$work/tc-tests/pfifo_bulk/pfifo_bulk.json")" 0
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
