#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side checks of the userspace tools; no pfifo_bulk kernel needed.
# Proves that the tc plugin's parse paths (help, bad syntax, unknown words,
# missing and repeated values, values that would wrap) give tc's exit
# codes and messages, leave ranges to the kernel, and are valgrind-clean;
# that its print paths, fed canned kernel dumps through "tc -s monitor
# file" (selftests/pfb_canned.py: all options, all xstats, a histogram,
# attributes from a "newer kernel", truncated ones, sizes tc rounds, caps
# of 0), print tc's way (print_size, no "0b") and are valgrind-clean; and
# for bulkctl: tc's grammar (global options, optional "dev", "VERB help",
# -n NETNS), one-line errors naming the word, values that would wrap or
# carry a sign refused as the plugin refuses them, handles and parents
# only as show prints them, nothing after -batch FILE, the completion
# following that grammar, show DEV without a pfifo_bulk
# exiting 0 (as tc), and "show file" text byte-identical to tc's and JSON
# with the canned values (and a file that is no dump failing).
#
# Nothing here may reach the host kernel: when run as root every command runs
# as nobody in a fresh network namespace, so even a request that slipped
# through parsing would get EPERM before the kernel looked at it.
#
#   selftests/host_valgrind.sh		(from the checkout; builds what it needs)

. "$(dirname "$0")/lib.sh"
require_cmd valgrind jq python3 tc

# Both build without a single warning (-Wall -Wextra), and the plugin exports
# nothing but the symbol tc looks up.
warnings=$( { make -B -s -C "$PFB_TOP/tc-plugin" && make -B -s -C "$PFB_TOP/tools/bulkctl"; } 2>&1 >/dev/null)
[ -f "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" ] && [ -x "$PFB_TOP/tools/bulkctl/bulkctl" ] ||
	{ echo "build failed: $warnings"; exit 1; }
check_eq "builds are warning-free" "$warnings" ""
check_eq "plugin exports one symbol" \
	"$(nm -D --defined-only "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" | awk '{ print $3 }')" \
	pfifo_bulk_qdisc_util

tmp=$(mktemp -d)
defer "rm -rf $tmp"
chmod 755 "$tmp"

if [ "$(id -u)" -eq 0 ]; then
	sandbox=(unshare -n setpriv --reuid=65534 --regid=65534 --clear-groups
		 --inh-caps=-all)
else
	sandbox=()
fi
vg=(valgrind -q --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect)
TC=(env TC_LIB_DIR="$PFB_TOP/tc-plugin" "${vg[@]}" tc)
BULKCTL=("${vg[@]}" "$PFB_TOP/tools/bulkctl/bulkctl")

# run OUT CMD...: CMD's stdout in $tmp/OUT, stderr in $tmp/OUT.err, exit
# status in $rc.
run() {
	local out=$1
	shift
	"${sandbox[@]}" "$@" > "$tmp/$out" 2> "$tmp/$out.err"
	rc=$?
}

# expect DESC RC PATTERN CMD...: exit status RC (valgrind's 99 is never
# expected) and PATTERN (grep -E) in stderr.
expect() {
	local what=$1 want=$2 pat=$3
	shift 3
	run out "$@"
	check_eq "$what: exit status" "$rc" "$want"
	check "$what: message" grep -qE -- "$pat" "$tmp/out.err"
}

# expect_1line DESC RC PATTERN CMD...: as expect, and stderr is one line.
expect_1line() {
	expect "$@"
	check_eq "$1: one line" "$(wc -l < "$tmp/out.err")" 1
}

# absent DESC TEXT: TEXT (grep -F) is in neither stdout nor stderr of the
# last run: an old wrong output stays gone.
absent() {
	check "$1: not \"$2\"" pfb_absent "$2"
}
pfb_absent() {
	! grep -qF -- "$1" "$tmp/out" "$tmp/out.err"
}

# --- tc plugin: parse paths ------------------------------------------------
add=("${TC[@]}" qdisc add dev lo root pfifo_bulk)
expect "tc help" 1 '^Usage: \.\.\. pfifo_bulk \[ limit PACKETS \]' "${add[@]}" help
expect "tc limit -1" 1 '^pfifo_bulk: Illegal value for "limit": "-1" \(a number of packets\)$' \
	"${add[@]}" limit -1
expect "tc limit 1k (counts are plain numbers)" 1 'Illegal value for "limit": "1k"' \
	"${add[@]}" limit 1k
expect "tc limit abc" 1 'Illegal value for "limit": "abc"' "${add[@]}" limit abc
expect "tc bulk_bytes 12parsecs" 1 \
	'Illegal value for "bulk_bytes": "12parsecs" \(a size: 1500, 64k, 1m\.\.\.\)' \
	"${add[@]}" bulk_bytes 12parsecs
expect "tc bulk_pkts x" 1 'Illegal value for "bulk_pkts": "x"' "${add[@]}" bulk_pkts x
expect "tc mode turbo" 1 'Illegal value for "mode": "turbo" \(auto, bql or nobql\)' \
	"${add[@]}" mode turbo
expect "tc coalesce_usecs 50parsecs" 1 \
	'Illegal value for "coalesce_usecs": "50parsecs" \(a time: 800us, 1ms\.\.\.\)' \
	"${add[@]}" coalesce_usecs 50parsecs
expect "tc coalesce_pkts x" 1 'Illegal value for "coalesce_pkts": "x" \(a number of packets\)' \
	"${add[@]}" coalesce_pkts x
# Values iproute2's parsers would turn into others (strtoul's negation,
# a double stored as it comes): refused, never sent as 1 or as 0 ("off");
# so is any number with a sign, which strtoul() and strtod() take.
would_wrap=("limit -18446744073709551615" "limit -0" "bulk_bytes -0k"
	    "coalesce_usecs -0" "coalesce_usecs 4294967297"
	    "coalesce_usecs 4294967.297s" "coalesce_usecs nan" "coalesce_usecs -0.5"
	    "coalesce_usecs 1e-9s" "coalesce_usecs ms" "bulk_bytes 0.5")
for v in "${would_wrap[@]}"; do
	expect "tc $v (would wrap)" 1 "^pfifo_bulk: Illegal value for \"${v% *}\": \"${v#* }\"" \
		"${add[@]}" $v
done
expect "tc limit +5" 1 '^pfifo_bulk: Illegal value for "limit": "\+5"' "${add[@]}" limit +5
expect "tc unknown word" 1 'pfifo_bulk: unknown parameter "burst"' "${add[@]}" burst 3
check "tc unknown word prints usage" grep -q '^Usage:' "$tmp/out.err"
expect "tc missing value" 255 'Command line is not complete' "${add[@]}" limit
expect "tc duplicate option" 255 'duplicate "bulk_pkts": "2" is the second value' \
	"${add[@]}" bulk_pkts 1 bulk_pkts 2
expect "tc bad value after good ones" 1 'Illegal value for "mode": "BQL"' \
	"${add[@]}" limit 10 bulk_bytes 64k bulk_pkts 8 mode BQL
expect "tc change bad value" 1 'Illegal value for "limit": "x"' \
	"${TC[@]}" qdisc change dev lo root pfifo_bulk limit x
expect "tc replace bad value" 1 'Illegal value for "bulk_pkts": "x"' \
	"${TC[@]}" qdisc replace dev lo root pfifo_bulk bulk_pkts x
# Ranges are the kernel's: a value out of range parses and is sent (here the
# sandbox's missing CAP_NET_ADMIN refuses it; in the VM the kernel's policy
# does, naming the range: tc_pfifo_bulk.sh).
if [ ${#sandbox[@]} -gt 0 ]; then
	for v in "limit 0" "limit 16777217" "bulk_bytes 17m" "bulk_pkts 65537" \
		 "coalesce_usecs 10000001" "coalesce_pkts 0" "limit 0x400" \
		 "coalesce_usecs 4294967295" "coalesce_usecs 1.5ms"; do
		expect "tc $v reaches the kernel" 2 '^RTNETLINK answers: Operation not permitted' \
			"${add[@]}" $v
		absent "tc $v: no range check of its own" "Illegal value"
	done
fi
check "tc plugin prints sizes with tc's print_size()" \
	eval 'nm -D --undefined-only "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" | grep -qw print_color_size'
check "tc plugin prints counters with print_u64()" \
	eval 'nm -D --undefined-only "$PFB_TOP/tc-plugin/q_pfifo_bulk.so" | grep -qw print_color_u64'

# --- tc plugin: print paths, from canned dumps --------------------------------
python3 "$PFB_TOP/selftests/pfb_canned.py" "$tmp/canned" 1
chmod 644 "$tmp/canned"
run tc.txt "${TC[@]}" -s monitor file "$tmp/canned"
check_eq "tc -s monitor file: exit status (valgrind clean)" "$rc" 0
check_eq "tc: no errors" "$(cat "$tmp/tc.txt.err")" ""
# Trailing blanks and blank lines are tc's own; compare without them.
sed -e 's/ *$//' -e '/^$/d' "$tmp/tc.txt" > "$tmp/tc.norm"
cat > "$tmp/want" <<'EOF'
qdisc pfifo_bulk 1: dev lo root refcnt 2 limit 1000p bulk_bytes 64Kb bulk_pkts 16 mode auto effective_mode nobql lockless coalesce_usecs 50us coalesce_pkts 8
 Sent 123456789 bytes 98765 pkt (dropped 7, overlimits 0 requeues 3)
 backlog 1500b 1p requeues 3
  batches 40000 batch_pkts 98765 batch_bytes 123456789 mean_batch 2.47
  batch_hist 1:10000 2:9000 3-4:8000 5-8:7000 9-16:4000 17-32:1500 33-64:400 65+:100
  end_bytes 11 end_pkts 22 end_budget 33 end_empty 39934
  reschedules 5 bypassed 6
  held 900 release_pkts 700 release_timer 199 sent_at_once 12 held_ns 21ms held_ns_max 53.1us
qdisc pfifo_bulk 2: dev lo parent 1:1 refcnt 2 bulk_pkts 4
qdisc pfifo_bulk 3: dev lo parent 1:2 refcnt 2 limit 500p bulk_bytes 64Kb mode bql effective_mode none locked
qdisc pfifo_bulk 4: dev lo parent 1:3 refcnt 2 limit 100p mode auto effective_mode bql lockless
qdisc pfifo_bulk 5: dev lo parent 1:4 refcnt 2
  batches 3 batch_pkts 3703702 mean_batch 1234567.33
EOF
check "tc prints every option and xstat, skips unknown and short ones" \
	diff -u "$tmp/want" "$tmp/tc.norm"
cp "$tmp/tc.txt" "$tmp/out"
: > "$tmp/out.err"
absent "tc: 65540 bytes as tc's size" "bulk_bytes 65540b"
absent "tc: a cap of 0" "bulk_bytes 0b"
absent "tc: a cap of 0" "bulk_pkts 0"

# --- bulkctl: grammar and errors ----------------------------------------------------
B=("${BULKCTL[@]}")
expect "bulkctl no arguments" 1 '^Usage: bulkctl' "${B[@]}"
for h in help --help -h -help "add help" "show help" "watch lo help" "del dev lo help"; do
	run out "${B[@]}" $h
	check_eq "bulkctl $h: exit status" "$rc" 0
	check "bulkctl $h: usage on stdout" \
		grep -q '^Usage: bulkctl \[ OPTIONS \] { add | change | replace } \[ dev \] DEV' "$tmp/out"
done
for v in --version -V -Version; do
	run out "${B[@]}" $v
	check_eq "bulkctl $v: exit status" "$rc" 0
	check "bulkctl $v" grep -qE '^bulkctl [0-9]' "$tmp/out"
done
expect_1line "bulkctl unknown command" 1 '^bulkctl: unknown command "frob"; try "bulkctl help"$' \
	"${B[@]}" frob
expect_1line "bulkctl unknown option" 1 '^bulkctl: unknown option "-x"' "${B[@]}" -x show
expect_1line "bulkctl add without DEV" 1 '^bulkctl: add: missing DEV$' "${B[@]}" add
expect_1line "bulkctl limit abc" 1 '^bulkctl: add: invalid "limit": "abc" \(a number of packets\)$' \
	"${B[@]}" add lo limit abc
absent "bulkctl bad value" "Usage:"
expect_1line "bulkctl limit -1" 1 'invalid "limit": "-1"' "${B[@]}" add dev lo limit -1
expect_1line "bulkctl bulk_bytes 12parsecs" 1 \
	'^bulkctl: replace: invalid "bulk_bytes": "12parsecs" \(a size: 1500, 64k, 1m\.\.\.\)$' \
	"${B[@]}" replace dev lo bulk_bytes 12parsecs
expect_1line "bulkctl bulk_pkts x" 1 'invalid "bulk_pkts": "x" \(a number of packets\)' \
	"${B[@]}" change lo bulk_pkts x
expect_1line "bulkctl mode turbo" 1 'invalid "mode": "turbo" \(auto, bql or nobql\)' \
	"${B[@]}" add lo mode turbo
expect_1line "bulkctl coalesce_usecs 50parsecs" 1 \
	'invalid "coalesce_usecs": "50parsecs" \(a time: 800us, 1ms\.\.\.\)' "${B[@]}" add lo coalesce_usecs 50parsecs
expect_1line "bulkctl coalesce_pkts x" 1 'invalid "coalesce_pkts": "x" \(a number of packets\)' \
	"${B[@]}" add lo coalesce_pkts x
for v in "${would_wrap[@]}"; do
	expect_1line "bulkctl $v (would wrap)" 1 "^bulkctl: add: invalid \"${v% *}\": \"${v#* }\"" \
		"${B[@]}" add lo $v
done
expect_1line "bulkctl limit +5" 1 'invalid "limit": "\+5"' "${B[@]}" add lo limit +5
expect_1line "bulkctl a space before a number" 1 'invalid "limit": " 5"' "${B[@]}" add lo limit " 5"
# Handles and parents as show prints them: no sign, minor of a handle or
# part beyond ffff, which tc's parsers drop or cut; no bare number.
for v in "handle 1:2" "handle 10000:" "handle -1:" "parent -1:1" "parent 1" "parent 100000001" \
	 "parent :" "parent 1:10000"; do
	expect_1line "bulkctl $v" 1 "^bulkctl: add: invalid \"${v% *}\": \"${v#* }\" \(" \
		"${B[@]}" add lo $v
done
expect_1line "bulkctl watch count -1" 1 '^bulkctl: watch: invalid "count": "-1" \(a number from 1\)$' \
	"${B[@]}" watch lo count -1
expect_1line "bulkctl - (no option)" 1 '^bulkctl: unknown option "-"' "${B[@]}" - show
expect_1line "bulkctl -- (no option)" 1 '^bulkctl: unknown option "--"' "${B[@]}" -- show
expect_1line "bulkctl -batch FILE and more" 1 '^bulkctl: unexpected "show" after "-batch FILE"$' \
	"${B[@]}" -batch /dev/null show
expect_1line "bulkctl missing value" 1 'missing value for "limit"' "${B[@]}" add lo limit
expect_1line "bulkctl a typo taken for the device" 1 '^bulkctl: add: cannot find device "limt"$' \
	"${B[@]}" add limt 5
expect_1line "bulkctl duplicate" 1 'duplicate "bulk_pkts"' "${B[@]}" add lo bulk_pkts 1 bulk_pkts 2
expect_1line "bulkctl duplicate dev" 1 'duplicate "dev"' "${B[@]}" show dev lo dev lo
expect_1line "bulkctl unknown word" 1 '^bulkctl: add: unknown argument "burst"; try "bulkctl add help"$' \
	"${B[@]}" add lo burst 3
expect_1line "bulkctl del takes no options" 1 '^bulkctl: delete: unknown argument "limit"' \
	"${B[@]}" del lo limit 5
expect_1line "bulkctl bad parent" 1 'invalid "parent": "12345:1"' "${B[@]}" add lo parent 12345:1
expect_1line "bulkctl bad handle" 1 'invalid "handle": "10000:"' "${B[@]}" add lo handle 10000:
expect_1line "bulkctl no such device" 1 '^bulkctl: add: cannot find device "nosuchdev0"$' \
	"${B[@]}" add dev nosuchdev0 limit 5
expect_1line "bulkctl show dev (no name)" 1 '^bulkctl: show: missing value for "dev"$' \
	"${B[@]}" show dev
absent "bulkctl show dev" 'cannot find device "dev"'
expect_1line "bulkctl watch interval 0" 1 'invalid "interval": "0"' "${B[@]}" watch lo interval 0
expect_1line "bulkctl watch count 0" 1 'invalid "count": "0"' "${B[@]}" watch dev lo count 0
expect_1line "bulkctl watch interval twice" 1 '^bulkctl: watch: duplicate "interval"$' \
	"${B[@]}" watch lo interval 1 interval 2
expect_1line "bulkctl options go before the verb" 1 'unknown argument "-j"' "${B[@]}" show lo -j
expect_1line "bulkctl -n without a name" 1 'missing value for "-n"' "${B[@]}" -n
expect_1line "bulkctl -n no such netns" 1 \
	'^Cannot open network namespace "nosuchns0": No such file or directory$' \
	"${B[@]}" -n nosuchns0 show
expect_1line "bulkctl -n a path" 1 '^bulkctl: invalid network namespace name "\.\./x"$' \
	"${B[@]}" -n ../x show
# (iproute2's "Cannot open network namespace" line would show it raw)
expect_1line "bulkctl -n a name with a newline" 1 \
	'^bulkctl: invalid network namespace name "a\\x0ab"$' "${B[@]}" -n $'a\nb' show
if [ ${#sandbox[@]} -gt 0 ]; then
	expect_1line "bulkctl add without CAP_NET_ADMIN" 2 \
		'^RTNETLINK answers: Operation not permitted \(changing a qdisc needs CAP_NET_ADMIN\)$' \
		"${B[@]}" add dev lo limit 5
	absent "bulkctl EPERM" "bulkctl: add: Operation not permitted"
	# Ranges are the kernel's here too.
	expect_1line "bulkctl limit 0 reaches the kernel" 2 '^RTNETLINK answers: Operation not permitted' \
		"${B[@]}" add lo limit 0
	# As tc: nothing to show is no error.
	run out "${B[@]}" show dev lo
	check_eq "bulkctl show DEV without a pfifo_bulk: exit 0, no output" \
		"$rc:$(cat "$tmp/out" "$tmp/out.err")" "0:"
	run out "${B[@]}" -j show lo
	check_eq "bulkctl -j show DEV without a pfifo_bulk: empty array" \
		"$rc:$(cat "$tmp/out" "$tmp/out.err")" "0:[]"
	expect_1line "bulkctl watch without a pfifo_bulk" 2 '^bulkctl: watch: no pfifo_bulk qdisc on lo$' \
		"${B[@]}" watch lo count 1
fi

# --- bulkctl: print paths, from the same canned dumps ----------------------------
run b.txt "${B[@]}" -s show file "$tmp/canned"
check_eq "bulkctl -s show file: exit status (valgrind clean)" "$rc" 0
check "bulkctl -s text = tc -s text, byte for byte" diff -u "$tmp/tc.txt" "$tmp/b.txt"
run b.txt "${B[@]}" show file "$tmp/canned"
run tc.txt "${TC[@]}" monitor file "$tmp/canned"
check "bulkctl text = tc text, byte for byte" diff -u "$tmp/tc.txt" "$tmp/b.txt"
# A file that is not a dump (an ELF header, read as a netlink length):
# iproute2's reader says so, and bulkctl fails.
printf '\177ELF%060d' 0 > "$tmp/notadump"
chmod 644 "$tmp/notadump"
expect_1line "bulkctl show file of no dump" 2 '^!!!malformed message: len=1179403647' \
	"${B[@]}" show file "$tmp/notadump"
run b.json "${B[@]}" -s -j show file "$tmp/canned"
check_eq "bulkctl -s -j show file: exit status (valgrind clean)" "$rc" 0
check "bulkctl JSON parses" eval 'jq -e "length == 5" "$tmp/b.json" >/dev/null'
want=$(python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import pfb_canned, json
v = pfb_canned.VALUES
o = {k: v[k] for k in ("limit", "bulk_bytes", "bulk_pkts", "coalesce_usecs",
                       "coalesce_pkts")}
o["mode"], o["effective_mode"], o["lockless"] = "auto", "nobql", True
s = {k: v[k] for k in ("bytes", "packets", "drops", "overlimits", "requeues",
     "backlog", "qlen", "batches", "batch_pkts", "batch_bytes", "end_bytes",
     "end_pkts", "end_budget", "end_empty", "reschedules", "bypassed", "held",
     "release_pkts", "release_timer", "sent_at_once", "held_ns", "held_ns_max")}
s["batch_hist"] = dict(zip(["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"], v["hist"]))
s["options"] = o
print(json.dumps(s, sort_keys=True))' "$PFB_TOP/selftests")
got=$(jq -cS '.[0] | del(.kind, .handle, .dev, .root, .refcnt, .mean_batch)' "$tmp/b.json")
check_eq "bulkctl JSON values = canned values" "$got" "$(echo "$want" | jq -cS .)"
check_eq "bulkctl JSON: no mean_batch (derived; its text has it)" \
	"$(jq -c '[.[] | has("mean_batch")] | unique' "$tmp/b.json")" '[false]'
check_eq "bulkctl JSON place" "$(jq -c '[.[] | [.handle, .dev, .root, .parent, .refcnt]]' "$tmp/b.json")" \
	'[["1:","lo",true,null,2],["2:","lo",null,"1:1",2],["3:","lo",null,"1:2",2],["4:","lo",null,"1:3",2],["5:","lo",null,"1:4",2]]'
check_eq "bulkctl JSON skips short and unknown attributes" \
	"$(jq -c '.[1] | [.options, .batches]' "$tmp/b.json")" '[{"bulk_pkts":4},null]'
check_eq "bulkctl JSON keeps sizes and caps of 0 as numbers" \
	"$(jq -c '[.[2:4][] | .options | [.bulk_bytes, .bulk_pkts, .effective_mode, .lockless]]' "$tmp/b.json")" \
	'[[65540,0,"none",false],[0,0,"bql",true]]'
check_eq "bulkctl JSON keeps coalescing off as numbers, text hides it" \
	"$(jq -c '.[2].options | [.coalesce_usecs, .coalesce_pkts]' "$tmp/b.json")" '[0,8]'
check "bulkctl JSON: the last qdisc's counters" \
	grep -qF '"batches":3,"batch_pkts":3703702}' "$tmp/b.json"
cp "$tmp/b.json" "$tmp/out"
absent "bulkctl JSON: no %g" "1.23457e+06"
run b.json "${B[@]}" -j show file "$tmp/canned"
check_eq "bulkctl JSON without -s has no stats" \
	"$(jq -c '[.[] | has("batches", "bytes")] | unique' "$tmp/b.json")" '[false]'

# --- bulkctl: bash completion ----------------------------------------------------------
# complete WORD...: what the completion offers for the last WORD.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _bulkctl
		 echo "${COMPREPLY[*]}"' x "$PFB_TOP/tools/bulkctl/bulkctl.bash-completion" bulkctl "$@"
}
check_eq "completion: options and commands" "$(complete_words -j "")" \
	"-s -j -p -n -b -h -V -stats -json -pretty -netns -batch -help -Version add change replace delete show list watch help"
check_eq "completion: add's words" "$(complete_words add dev lo "")" \
	"root parent handle limit bulk_bytes bulk_pkts mode coalesce_usecs coalesce_pkts help"
check_eq "completion: the device after dev" "$(complete_words add dev l)" "lo"
check_eq "completion: modes" "$(complete_words -s add lo mode "")" "auto bql nobql"
check_eq "completion: each word once, root excludes parent" \
	"$(complete_words change lo root limit 5 "")" "handle bulk_bytes bulk_pkts mode coalesce_usecs coalesce_pkts help"
check_eq "completion: watch's words" "$(complete_words watch lo "")" "interval count help"
check_eq "completion: show's words" "$(complete_words -n nosuchns0 show "")" "dev file help"
check_eq "completion: an abbreviated command, as bulkctl reads it (d is delete)" \
	"$(complete_words d lo "")" "root parent handle help"
check_eq "completion: w is watch" "$(complete_words -j w lo "")" "interval count help"
# Every command, keyword and option of the usage is in the man page and the
# completion ("-s[tats]": both -s and -stats).
"${B[@]}" help > "$tmp/usage"
usage_words=$(sed -n '1,/^OPTIONS/p' "$tmp/usage" | grep -oE -- '-?[a-zA-Z][a-zA-Z_]*(\[[a-z]+\])?' |
	grep -vxE '[A-Z]+|Usage|bulkctl' |
	sed -E 's/^(-[a-zA-Z])\[([a-z]+)\]$/\1\n\1\2/' | sort -u)
missing=
for w in $usage_words; do
	grep -qF -- "${w//-/\\-}" "$PFB_TOP/tools/bulkctl/bulkctl.8" || missing+=" man:$w"
	grep -qwE -- "$w" "$PFB_TOP/tools/bulkctl/bulkctl.bash-completion" || missing+=" completion:$w"
done
check_eq "usage's $(echo $usage_words | wc -w) words in the man page and the completion" "$missing" ""
check_eq "completion: -b takes a file" "$(complete_words -b /dev/nul)" "/dev/null"
check_eq "completion: -bat takes a file too" "$(complete_words --bat /dev/nul)" "/dev/null"
check_eq "completion: nothing after -b FILE" "$(complete_words -b x.txt s)" ""
check_eq "completion: -net NAME is a namespace, then the command" "$(complete_words -net nosuchns0 sh)" "show"
check_eq "completion: root is no device" "$(complete_words add root "")" \
	"dev handle limit bulk_bytes bulk_pkts mode coalesce_usecs coalesce_pkts help $(ls /sys/class/net | tr '\n' ' ' | sed 's/ $//')"
check "make install puts the completion in place" eval '
	make -s -C "$PFB_TOP/tools/bulkctl" install DESTDIR="$tmp/inst" >/dev/null &&
	cmp "$PFB_TOP/tools/bulkctl/bulkctl.bash-completion" \
	    "$tmp/inst/usr/local/share/bash-completion/completions/bulkctl"'

pfb_exit
