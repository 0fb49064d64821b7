#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make debug-kernel: the debug guest kernels of "make check-debug", built
# from linux-source-6.12 with the series of "make kernel-patch" applied, so
# that sch_pfifo_bulk and refnic are in-tree modules (=m):
#
#   kasan   KASAN + lockdep (PROVE_LOCKING, PROVE_RCU) + DEBUG_ATOMIC_SLEEP
#           + kmemleak + DEBUG_NET
#   kcsan   the same with KCSAN instead of KASAN (they exclude each other)
#
# Config: allnoconfig with tools/vm/configs/guest.config, then debug.config
# and FLAVOUR.config merged in with olddefconfig, so that the options the
# checkers bring along keep their defaults (allnoconfig would turn off,
# e.g., KCSAN_EARLY_ENABLE: KCSAN would never start). Every option of the
# fragments must survive into .config.
#
# Cache, under $PFB_SRCDIR/debug-kernel (default /var/cache/pfifo-bulk):
#   src-SRCVER/                the tarball unpacked, the series applied
#   obj-SRCVER-FLAVOUR/        the object tree (O=), kept: a new series
#                              rebuilds only what it changes
#   SRCVER-SERIES/FLAVOUR-CONFIG/  the result, an install root for tools/vm/run
#                              (PFB_VM_ROOT): boot/vmlinuz-KVER,
#                              boot/config-KVER, lib/modules/KVER (depmod
#                              done), vmlinux (a link into the object
#                              tree) for decode_stacktrace.sh
# SRCVER is the linux-source-6.12 package version, SERIES the hash of the
# series, CONFIG that of the flavour's config fragments: a kernel is built
# once and reused while none of them changes.
#
#   scripts/debug-kernel.sh [FLAVOUR...]     build what is missing (default:
#                                            kasan kcsan), print the roots
#   scripts/debug-kernel.sh --root FLAVOUR   print the root of FLAVOUR for
#                                            this checkout; exit 1 if it is
#                                            not built
#
# Builds run with nice -n 19 and make -j${PFB_JOBS:-2}: the host is shared.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${PFB_SRCDIR:-/var/cache/pfifo-bulk}
dk=$cache/debug-kernel
tarball=${PFB_KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
jobs=${PFB_JOBS:-2}
configs=$top/tools/vm/configs

log() { echo "debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

only_root=
if [ "${1:-}" = "--root" ]; then
	only_root=${2:?"--root FLAVOUR"}
	set -- "$only_root"
fi
flavours=("$@")
[ ${#flavours[@]} -gt 0 ] || flavours=(kasan kcsan)
for f in "${flavours[@]}"; do
	[ -f "$configs/$f.config" ] || die "unknown flavour '$f' (no $configs/$f.config)"
done

[ -r "$tarball" ] || die "no $tarball (make setup)"
srcname=$(basename "$tarball" .tar.xz)
srcver=$(dpkg-query -W -f='${Version}' "$srcname" 2>/dev/null || true)
[ -n "$srcver" ] || srcver=$(sha256sum "$tarball" | cut -c1-12)
srcver=$(echo "$srcver" | tr -c 'A-Za-z0-9.+\n-' '-')

hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

mkdir -p "$dk"

# --- the series ---------------------------------------------------------------------
series=$dk/series.$$
trap 'rm -rf "$series"' EXIT
[ -n "$only_root" ] || log "[series] make kernel-patch"
"$top/scripts/kernel-patch.sh" ${only_root:+-n} -o "$series" 2> "$dk/kernel-patch.log" ||
	{ cat "$dk/kernel-patch.log" >&2; die "kernel-patch failed"; }
sum=$(cat "$series/series.sha")
key=$srcver-$sum
[ -n "$only_root" ] || log "[series] $(grep -vc cover-letter "$series/series") patches, series $sum: key $key"

# result FLAVOUR: where the kernel of FLAVOUR for this series and config is
# (the config: the fragments and this script, which makes it from them).
result() {
	echo "$dk/$key/$1-$(cat "$configs/guest.config" "$configs/debug.config" \
		"$configs/$1.config" "$0" | sha256sum | cut -c1-8)"
}

if [ -n "$only_root" ]; then
	[ -f "$(result "$only_root")/.done" ] || exit 1
	result "$only_root"
	exit 0
fi

exec 9> "$dk/.lock"
if ! flock -n 9; then
	log "waiting for another debug-kernel build (lock $dk/.lock)"
	flock 9
fi

todo=()
for f in "${flavours[@]}"; do
	if [ -f "$(result "$f")/.done" ]; then
		log "[$f] cached: $(result "$f") ($(cat "$(result "$f")/.done"))"
	else
		todo+=("$f")
	fi
done
if [ ${#todo[@]} -eq 0 ]; then
	for f in "${flavours[@]}"; do result "$f"; done
	exit 0
fi

# --- the source tree: unpacked once, the series swapped in place ---------------
# Only the files the series touches change, so the object trees stay valid.
src=$dk/src-$srcver
applied=$src/.pfb-series
unpack() {
	log "[unpack] $tarball -> $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.pfb-unpacked"
	mv "$src.tmp" "$src"
}
unapply() {
	local p
	[ -d "$applied" ] || return 0
	for p in $(sort -r "$applied/series"); do
		(cd "$src" && git apply -R "$applied/$p") || return 1
	done
	rm -rf "$applied"
}
[ -f "$src/.pfb-unpacked" ] || unpack
if [ -d "$applied" ] && cmp -s "$applied/series.sha" "$series/series.sha"; then
	log "[patch] series $sum already applied in $src"
else
	if ! unapply; then
		log "[patch] the old series does not come out cleanly: unpacking afresh"
		unpack
	fi
	log "[patch] git apply the series ($sum) to $src"
	(cd "$src" && git apply $(sed "s|^|$series/|" "$series/series" | grep -v cover-letter)) ||
		die "the series does not apply to $src"
	mkdir -p "$applied"
	cp "$series"/0*.patch "$series/series" "$series/series.sha" "$applied/"
	sed -i '/cover-letter/d' "$applied/series"
fi

# --- per flavour: config, build, install ---------------------------------------------
for f in "${todo[@]}"; do
	obj=$dk/obj-$srcver-$f
	dest=$(result "$f")
	mkdir -p "$obj"
	frag=$obj/.pfb-fragment.config
	cat "$configs/guest.config" "$configs/debug.config" "$configs/$f.config" > "$frag"
	# Rewriting .config costs nothing: kbuild rebuilds only what uses an
	# option whose value changed.
	log "[$f] config: allnoconfig + guest.config, olddefconfig + debug.config $f.config"
	{
		make -s -C "$src" O="$obj" KCONFIG_ALLCONFIG="$configs/guest.config" allnoconfig &&
		cat "$configs/debug.config" "$configs/$f.config" >> "$obj/.config" &&
		make -s -C "$src" O="$obj" olddefconfig
	} > "$obj/.pfb-config.log" 2>&1 ||
		{ cat "$obj/.pfb-config.log" >&2; die "[$f] config failed"; }
	# Every option asked for must be what .config has: a dependency
	# missing turns an option off without a word.
	bad=$(grep -E '^CONFIG_' "$frag" | while IFS= read -r l; do
		k=${l%%=*} v=${l#*=}
		if [ "$v" = n ]; then
			! grep -q "^$k=" "$obj/.config" || echo "$l"
		else
			grep -qxF "$l" "$obj/.config" || echo "$l"
		fi
	done)
	[ -z "$bad" ] || die "[$f] options the config did not take: $(echo $bad)"

	log "[$f] build: nice -n 19 make -j$jobs (log: $obj/.pfb-build.log)"
	start=$(date +%s)
	if ! nice -n 19 make -C "$src" O="$obj" -j"$jobs" bzImage modules > "$obj/.pfb-build.log" 2>&1; then
		tail -n 40 "$obj/.pfb-build.log" >&2
		die "[$f] build failed (log: $obj/.pfb-build.log)"
	fi
	secs=$(($(date +%s) - start))
	# only now: in a fresh object tree kernelrelease has no LOCALVERSION
	# until the build has written include/config/kernel.release
	kver=$(make -s -C "$src" O="$obj" kernelrelease)
	log "[$f] built $kver in $(hms $secs)"

	log "[$f] install -> $dest"
	rm -rf "$dest"
	mkdir -p "$dest/boot"
	make -s -C "$src" O="$obj" INSTALL_MOD_PATH="$dest" modules_install > "$obj/.pfb-install.log" 2>&1 ||
		{ cat "$obj/.pfb-install.log" >&2; die "[$f] modules_install failed"; }
	[ -f "$dest/lib/modules/$kver/modules.dep" ] || die "[$f] no modules.dep (depmod)"
	for m in sch_pfifo_bulk refnic; do
		grep -q "/$m.ko:" "$dest/lib/modules/$kver/modules.dep" ||
			die "[$f] $m.ko is not in modules.dep"
	done
	rm -f "$dest/lib/modules/$kver/build" "$dest/lib/modules/$kver/source"
	cp "$obj/arch/x86/boot/bzImage" "$dest/boot/vmlinuz-$kver"
	cp "$obj/.config" "$dest/boot/config-$kver"
	cp "$obj/System.map" "$dest/boot/System.map-$kver"
	ln -sfn "$obj/vmlinux" "$dest/vmlinux"
	echo "$kver, built in $(hms $secs) with -j$jobs" > "$dest/.done"
done

# Keep the newest four results per flavour; the object trees stay.
for f in kasan kcsan; do
	ls -dt "$dk"/*/"$f"-*/.done 2>/dev/null | sed 's|/.done$||' | tail -n +5 | xargs -r rm -rf || true
done
for f in "${flavours[@]}"; do result "$f"; done
