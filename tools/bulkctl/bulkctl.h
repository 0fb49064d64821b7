/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bulkctl's parts and what they share: bulkctl.c (options, verbs, the
 * arguments of every verb, messages), modify.c (the verbs that change a
 * qdisc), dump.c (reading a qdisc dump), show.c and watch.c (their verbs).
 */
#ifndef BULKCTL_H
#define BULKCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "utils.h"
#include "pfifo_bulk_user.h"

enum { EXIT_USAGE = 1, EXIT_KERNEL = 2 };

/* bulkctl.c: messages, and the arguments after the verb */
extern const char *verb;
const char *shown(const char *s);
void __attribute__((noreturn)) quit(int status);
void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...);
#define bad_arg(...) die(EXIT_USAGE, __VA_ARGS__)

/* What a verb takes: a device it needs, root/parent/handle, the options... */
enum { W_DEV = 1, W_PLACE = 2, W_OPTS = 4, W_FILE = 8, W_WATCH = 16 };

struct args {
	const char *dev, *file;
	int ifindex;			/* of dev, 0 without one */
	__u32 parent, handle, count;
	double interval;
	bool has[TCA_PFIFO_BULK_MAX + 1];	/* the options given */
	__u32 val[TCA_PFIFO_BULK_MAX + 1];
};

/* dump.c: @fn runs on each pfifo_bulk of the dump (of @ifindex, 0: all) */
struct dump {
	int ifindex;
	void (*fn)(struct dump *d, const struct tcmsg *t, struct rtattr **tb);
	void *priv;
};

void dump_qdiscs(struct dump *d);
void read_qdiscs(struct dump *d, const char *path);

/* the verbs */
int do_modify(const struct args *a);
int do_show(const struct args *a);
int do_watch(const struct args *a);

#endif
