# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the tests of the userspace tools (tc plugin, bulkctl); source
# after lib.sh:
#	. "$(dirname "$0")/lib_userspace.sh"
# Points tc at the checkout's plugin (TC_LIB_DIR) and $BULKCTL at the
# checkout's bulkctl when they are built, else at the installed ones; skips
# the test when neither exists.

PFB_PLUGIN_DIR=$PFB_TOP/tc-plugin
if [ -f "$PFB_PLUGIN_DIR/q_pfifo_bulk.so" ]; then
	export TC_LIB_DIR=$PFB_PLUGIN_DIR
elif ! ls /usr/lib/*/tc/q_pfifo_bulk.so >/dev/null 2>&1; then
	echo "SKIP: tc plugin not built (make plugin)"
	exit $ksft_skip
fi
BULKCTL=$PFB_TOP/tools/bulkctl/bulkctl
[ -x "$BULKCTL" ] || BULKCTL=$(command -v bulkctl) || {
	echo "SKIP: bulkctl not built (make bulkctl)"
	exit $ksft_skip
}

# dummy_add NAME [ARGS...]: a dummy device, up, without IPv6, so that the
# only packets its qdisc sees are the ones a test sends. Deleted at exit.
dummy_add() {
	local name=$1
	shift
	ip link add "$name" "$@" type dummy || return 1
	defer "ip link del $name"
	sysctl -qw "net.ipv6.conf.$name.disable_ipv6=1" 2>/dev/null
	ip link set "$name" up
}

# pkt_send DEV COUNT: COUNT 60-byte frames through DEV's qdisc.
pkt_send() {
	python3 "$PFB_TESTDIR/pfb_pktsend.py" "$1" "$2"
}

# pkt_load DEV SECONDS: send frames for SECONDS, in the background; its pid
# is in $pkt_load_pid, and it is stopped at exit. Returns once DEV has sent
# a frame of it: python3 alone takes seconds to start on a debug kernel, so
# a fixed sleep is no way to know that the load runs.
pkt_load() {
	local tx0

	tx0=$(link_stat "$1" tx_packets)
	python3 "$PFB_TESTDIR/pfb_pktsend.py" "$1" 0 "$2" > /dev/null &
	pkt_load_pid=$!
	defer "kill $pkt_load_pid"
	wait_sent "$1" "$tx0"
}

# wait_sent DEV FROM: wait until DEV has sent more than FROM frames; fails
# after a minute (python3 starts in seconds even on a debug kernel: only a
# sender that never runs takes a minute).
wait_sent() {
	local i

	for ((i = 0; i < 600; i++)); do
		[ "$(link_stat "$1" tx_packets)" -gt "$2" ] && return 0
		sleep 0.1
	done
	echo "# $1 sent nothing in 60 s"
	return 1
}

# nl_dump DEV: the pfifo_bulk qdiscs of DEV as the kernel dumps them, read
# with raw netlink (no tc, no bulkctl), as JSON with the tools' key names.
nl_dump() {
	python3 "$PFB_TESTDIR/pfb_nldump.py" "$1"
}

# root_opts CMD...: the options object of the root qdisc in CMD's JSON.
root_opts() {
	"$@" | jq -cS '[.[] | select(.root == true)][0].options'
}

# expect_fail DESC RC PATTERN CMD...: CMD exits RC, and stderr matches
# PATTERN (grep -E).
expect_fail() {
	local what=$1 want=$2 pat=$3 err rc
	shift 3
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	check_eq "$what: exit status" "$rc" "$want"
	pfb_checks=$((pfb_checks + 1))
	if grep -qE -- "$pat" <<< "$err"; then
		echo "ok $pfb_checks $what: message"
	else
		echo "not ok $pfb_checks $what: message: '$err' does not match '$pat'"
		pfb_failed=1
	fi
}
