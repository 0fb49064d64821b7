# SPDX-License-Identifier: GPL-2.0
#
# make [KVER=<version>]   kernel modules for KVER, the tc plugin and bulkctl
# make check              tests: build for every test kernel, run the
#                         selftests in the VM for each (see README.rst)
# make demo               short benchmark in the VM on the default kernel
# make checkpatch         checkpatch.pl --strict over the kernel sources
# make install            modules, tc plugin, bulkctl and man pages
# make setup              install what all of the above needs (root)

KVER ?= $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
		sed 's|.*/linux-headers-||' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
SRCCACHE ?= /var/cache/pfifo-bulk

KERNEL_SOURCES := $(filter-out %.mod.c,$(wildcard net/sched/*.c \
			drivers/net/refnic/*.c drivers/net/refnic/*.h \
			include/uapi/linux/*.h))

.PHONY: all modules plugin ip-plugin bulkctl setup check demo checkpatch \
	install modules_install dkms_install clean clean-modules

all: modules plugin ip-plugin bulkctl

modules:
	@test -d "$(KDIR)" || { echo "no kernel build tree $(KDIR) (KVER=$(KVER)): run 'make setup'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

plugin:
	$(MAKE) -C tc-plugin

bulkctl:
	$(MAKE) -C tools/bulkctl

ip-plugin:
	$(MAKE) -C ip-plugin

setup:
	scripts/setup.sh

check: setup
	scripts/check.sh

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
