# SPDX-License-Identifier: GPL-2.0
#
# make [KVER=<version>]   kernel modules for KVER, the tc plugin and bulkctl
# make check              tests: build for every test kernel, run the
#                         selftests in the VM for each (see README.rst)
# make demo               short benchmark in the VM on the default kernel
# make checkpatch         checkpatch.pl --strict over the kernel sources
# make install            modules, tc plugin, bulkctl and man pages
# make rev-modules [REV=<rev>]  the qdisc of another revision for every
#                         installed kernel (the benchmark's pfb_locked)
# make race-modules [KVER=<version>]  a test-only build of the qdisc, with a
#                         delay that opens the lost-wakeup window (never
#                         installed; selftests/pfifo_bulk_wakeup.sh)
# make setup              install what all of the above needs (root)
# make kernel-patch       the series adding both and their tests to the
#                         newest linux-source in Debian's archive, made
#                         from this tree (.build/kernel-patch, KPATCH_OUT=)
# make debug-kernel       KASAN and KCSAN guest kernels with the series
#                         applied, cached (see scripts/debug-kernel.sh)
# make check-debug [QUICK=1 | TESTS="a.sh ..."]  the selftests and the soak
#                         on both of them (or a quick pass, or those tests)
# make check-intree [QUICK=1 | TESTS="a.sh ..."]  in the patched source tree
#                         of debug-kernel, on its KASAN kernel: the series'
#                         kselftest target (make run_tests) and tdc cases

KVER ?= $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
SRCCACHE ?= /var/cache/pfifo-bulk
# rev-modules: the last locked (non-TCQ_F_NOLOCK) pfifo_bulk by default
REV ?= 3c3248f
REV_KVERS ?= $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | sort -V)

# C=1's checker: the one setup puts in the trixie root for its newer
# kernels, where there is one (scripts/trixie-root.sh), else sparse.
SPARSE ?= $(firstword $(wildcard /opt/pfb-sparse/usr/bin/sparse) sparse)

KERNEL_SOURCES := $(filter-out %.mod.c,$(wildcard net/sched/*.c \
			drivers/net/refnic/*.c drivers/net/refnic/*.h \
			include/uapi/linux/*.h))

.PHONY: all modules plugin ip-plugin bulkctl setup check demo checkpatch \
	no-modules no-plugins no-bulkctl \
	install modules_install dkms_install clean clean-modules rev-modules race-modules \
	kernel-patch debug-kernel check-debug check-intree

# Plain "make" builds what it can: a part whose build needs what this host
# lacks (kernel headers, the iproute2 source, libmnl; "make setup" installs
# them) is left out, with one line saying what is missing. Naming a part
# ("make plugin") fails instead.
include tools/iproute2.mk
HAVE_KDIR := $(wildcard $(KDIR)/Makefile)
HAVE_MNL := $(shell pkg-config --exists libmnl 2>/dev/null && echo y)
all: $(if $(HAVE_KDIR),modules,no-modules) \
	$(if $(IPROUTE2_FOUND),plugin ip-plugin,no-plugins) \
	$(if $(IPROUTE2_FOUND),$(if $(HAVE_MNL),bulkctl,no-bulkctl))

no-modules:
	@echo "make: no kernel build tree $(KDIR) (KVER=$(KVER)): modules not built (make setup)" >&2
no-plugins:
	@echo "make: $(IPROUTE2_MISSING): tc plugin, ip plugin and bulkctl not built" >&2
no-bulkctl:
	@echo "make: no libmnl (libmnl-dev): bulkctl not built (make setup)" >&2

modules:
	@test -d "$(KDIR)" || { echo "no kernel build tree $(KDIR) (KVER=$(KVER)): run 'make setup'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) CHECK=$(SPARSE) modules

plugin:
	$(MAKE) -C tc-plugin

bulkctl:
	$(MAKE) -C tools/bulkctl

ip-plugin:
	$(MAKE) -C ip-plugin

setup:
	scripts/setup.sh

# The qdisc as of revision REV, for the benchmark's "before" configuration:
# git archive REV into .build/rev-<abbrev>/<KVER>/src for every installed
# kernel, build there, keep .build/rev-<abbrev>/<KVER>/sch_pfifo_bulk.ko and
# the commit in .build/rev-<abbrev>/commit. Always rebuilt from scratch.
# (make clean-modules removes these .ko too: the kernel's clean deletes
# every *.ko under M=.)
rev-modules:
	@set -e; \
	rev=$$(git rev-parse -q --verify --short '$(REV)^{commit}') || \
		{ echo "rev-modules: no commit '$(REV)' in this repository" >&2; exit 1; }; \
	dir=.build/rev-$$rev; \
	test -n "$(REV_KVERS)" || { echo "no kernel headers installed: run 'make setup'" >&2; exit 1; }; \
	rm -rf "$$dir"; mkdir -p "$$dir"; \
	git log -1 --format='%H %s' "$$rev" > "$$dir/commit"; \
	for k in $(REV_KVERS); do \
		test -d "/lib/modules/$$k/build" || { echo "no kernel build tree for $$k: run 'make setup'" >&2; exit 1; }; \
		mkdir -p "$$dir/$$k/src"; \
		git archive "$$rev" | tar -x -C "$$dir/$$k/src"; \
		echo "rev-modules: $$rev for $$k"; \
		$(MAKE) -s -C "/lib/modules/$$k/build" M="$(CURDIR)/$$dir/$$k/src" modules; \
		cp "$$dir/$$k/src/net/sched/sch_pfifo_bulk.ko" "$$dir/$$k/"; \
	done; \
	ls "$$dir"/*/sch_pfifo_bulk.ko

# The qdisc of this working tree built for tests only, with
# PFB_TEST_RACE_DELAY_US: a busy wait of RACE_DELAY_US in the consumer,
# between finding the queue empty and testing MISSED, which makes a lost
# wakeup likely enough for selftests/pfifo_bulk_wakeup.sh to see. Built
# from a copy in RACE_OUT (default .build/race/KVER), so that the shipped
# build is never touched: RACE_OUT/sch_pfifo_bulk.ko. Never installed.
RACE_DELAY_US ?= 200
RACE_OUT ?= .build/race/$(KVER)
race-modules:
	@test -d "$(KDIR)" || { echo "no kernel build tree $(KDIR) (KVER=$(KVER)): run 'make setup'" >&2; exit 1; }
	rm -rf "$(RACE_OUT)"
	mkdir -p "$(RACE_OUT)/src/include/uapi/linux"
	cp net/sched/Kbuild net/sched/sch_pfifo_bulk.c "$(RACE_OUT)/src/"
	cp include/uapi/linux/pkt_sched_pfifo_bulk.h "$(RACE_OUT)/src/include/uapi/linux/"
	$(MAKE) -C $(KDIR) M="$(abspath $(RACE_OUT))/src" modules \
		CONFIG_NET_SCH_PFIFO_BULK=m \
		KCFLAGS="-I$(abspath $(RACE_OUT))/src/include/uapi -DPFB_TEST_RACE_DELAY_US=$(RACE_DELAY_US)"
	cp "$(RACE_OUT)/src/sch_pfifo_bulk.ko" "$(RACE_OUT)/"

check: setup
	scripts/check.sh

kernel-patch:
	scripts/kernel-patch.sh $(if $(KPATCH_OUT),-o $(KPATCH_OUT))

debug-kernel: setup
	scripts/debug-kernel.sh

check-debug: setup
	scripts/check-debug.sh $(if $(QUICK),--quick,$(if $(TESTS),--only "$(TESTS)"))

check-intree: setup
	scripts/check-intree.sh $(if $(QUICK),-t smoke.sh,$(if $(TESTS),-t "$(TESTS)"))

demo: setup
	scripts/demo.sh

# Kernel types such as struct Qdisc are CamelCase: checkpatch learns them from
# the installed kernel headers (--root); GIT_DIR points away from our own git
# tree, which it would read instead.
checkpatch:
	@cp=$$(ls $(SRCCACHE)/linux-source-*/scripts/checkpatch.pl 2>/dev/null | sort -V | tail -n1); \
	test -n "$$cp" || { echo "checkpatch.pl not found: run 'make setup'" >&2; exit 1; }; \
	hdr=$$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -n1); \
	GIT_DIR=/nonexistent perl $$cp --strict --no-tree $${hdr:+--root=$$hdr} \
		--terse --show-types -f $(KERNEL_SOURCES) > .checkpatch.out; \
	cat .checkpatch.out; \
	! grep -qE 'ERROR|WARNING|CHECK' .checkpatch.out

modules_install: modules
	install -d $(DESTDIR)/lib/modules/$(KVER)/updates
	install -m 644 net/sched/sch_pfifo_bulk.ko drivers/net/refnic/refnic.ko \
		$(DESTDIR)/lib/modules/$(KVER)/updates/
	test -n "$(DESTDIR)" || depmod -a $(KVER)

install: all modules_install
	$(MAKE) -C tc-plugin install
	$(MAKE) -C tools/bulkctl install
	$(MAKE) -C ip-plugin install

# DKMS: register this source tree and build and install the modules for
# every kernel whose headers are installed (and, through AUTOINSTALL, for
# kernels installed later).
dkms_install:
	scripts/dkms-check.sh --install

clean-modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

clean: clean-modules
	$(MAKE) -C tc-plugin clean
	$(MAKE) -C tools/bulkctl clean
	$(MAKE) -C ip-plugin clean
	rm -f .checkpatch.out
