# SPDX-License-Identifier: GPL-2.0
#
# The iproute2 source the userspace parts build against (tc-plugin/,
# tools/bulkctl/, ip-plugin/): that of the installed iproute2 package, which
# "make setup" unpacks, or IPROUTE2_SRC=DIR. Nothing of it is copied into
# this tree; the tc plugin needs its headers, bulkctl and the ip plugin also
# compile parts of its library.

IPROUTE2_VERSION := $(shell dpkg-query -W -f='$${Version}' iproute2 2>/dev/null)
IPROUTE2_SRC ?= /var/cache/pfifo-bulk/iproute2-$(IPROUTE2_VERSION)
IPROUTE2_FOUND := $(wildcard $(IPROUTE2_SRC)/tc/tc_util.h)
IPROUTE2_MISSING := no iproute2 source in '$(IPROUTE2_SRC)': run make setup or set IPROUTE2_SRC

# iproute2's own defines and include path (its top Makefile): its uapi
# copies come first, ours only add what is ours.
IPROUTE2_CPPFLAGS := -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_LARGEFILE_SOURCE \
	-D_LARGEFILE64_SOURCE -I$(IPROUTE2_SRC)/include \
	-I$(IPROUTE2_SRC)/include/uapi
