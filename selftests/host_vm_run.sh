#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of tools/vm/run's second boot: a QEMU that ends before
# the guest's init started ran nothing of ours and is booted once more;
# one that ends after it is a failure of the run, not booted again. A
# stand-in qemu-system-x86_64 on PATH aborts where it is told to, and
# otherwise plays a guest that ran the command (no VM is started).
#
#   selftests/host_vm_run.sh

. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
defer "rm -rf $tmp"

mkdir "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<'STUB'
#!/bin/bash
# STUB_ABORT: "boot" aborts every boot before the guest's init, "first"
# only the first, "late" every boot after it.
n=$(cat "$STUB_DIR/boots" 2>/dev/null || echo 0)
echo $((n + 1)) > "$STUB_DIR/boots"
run=$(printf '%s\n' "$@" | sed -n 's/.* pfb\.run=\([^ ]*\).*/\1/p')
ulimit -c 0
case $STUB_ABORT:$n in
boot:* | first:0) kill -ABRT $$ ;;
esac
touch "$run/booted"
[ "$STUB_ABORT" = late ] && kill -ABRT $$
echo "Linux version $n (stand-in)" > "$run/dmesg"
echo "guest ran"
echo 0 > "$run/rc"
STUB
chmod +x "$tmp/bin/qemu-system-x86_64"

# vm_run MODE: tools/vm/run with the stand-in (on the host's kernel that
# it picks itself), its exit status in $rc, its output in $tmp/out, the
# boots it made in $boots
vm_run() {
	rm -f "$tmp/boots"
	PATH=$tmp/bin:$PATH STUB_DIR=$tmp STUB_ABORT=$1 PFB_VM_ACCEL=tcg \
		PFB_VM_OUT=$tmp/vm PFB_VM_CACHE=$tmp/cache \
		"$PFB_TOP/tools/vm/run" -t 60 -- true > "$tmp/out" 2>&1
	rc=$?
	boots=$(cat "$tmp/boots" 2>/dev/null || echo 0)
}

vm_run first
check_eq "aborted before init: exit status of the second boot" "$rc" 0
check_eq "aborted before init: booted twice" "$boots" 2
check "aborted before init: says why it boots once more" \
	grep -q "QEMU ended (exit 134) before the guest's init started" "$tmp/out"
check_eq "aborted before init: the command ran once" "$(grep -c '^guest ran$' "$tmp/out")" 1

vm_run boot
check_eq "aborted before init twice: a failure (124)" "$rc" 124
check_eq "aborted before init twice: booted twice, not more" "$boots" 2
check "aborted before init twice: QEMU's status" \
	grep -q "guest did not finish (qemu exit 134" "$tmp/out"

vm_run late
check_eq "aborted after init: a failure (124)" "$rc" 124
check_eq "aborted after init: not booted again" "$boots" 1

vm_run none
check_eq "no abort: exit status" "$rc" 0
check_eq "no abort: booted once" "$boots" 1
pfb_exit
