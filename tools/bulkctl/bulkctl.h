/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bulkctl's parts and what they share: bulkctl.c (arguments, the verbs that
 * change a qdisc, main), netlink.c (the socket and its errors),
 * qdisc_dump.c (reading a qdisc dump), show.c and watch.c (their verbs).
 */
#ifndef BULKCTL_H
#define BULKCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <libmnl/libmnl.h>

#include "pfifo_bulk_user.h"

/* libmnl 1.0.4 has no MNL_SOCKET_DUMP_SIZE; dumps need more than a page. */
#ifndef MNL_SOCKET_DUMP_SIZE
#define MNL_SOCKET_DUMP_SIZE 32768
#endif

enum { EXIT_USAGE = 1, EXIT_KERNEL = 2 };

/* bulkctl.c: the verb being run, messages, tc's argument rules */
extern const char *verb;
void usage(FILE *f);
const char *shown(const char *s);
void __attribute__((noreturn, format(printf, 2, 3)))
die(int status, const char *fmt, ...);
#define bad_arg(...) die(EXIT_USAGE, __VA_ARGS__)
const char *next_value(int *i, int argc, char **argv);
bool common_word(int *i, int argc, char **argv, const char **dev);
int dev_index(const char *dev);

/* netlink.c */
extern volatile sig_atomic_t stop;	/* watch: SIGINT or SIGTERM seen */
extern char nl_buf[MNL_SOCKET_DUMP_SIZE];
void nl_open(void);
int run_msgs(const void *buf, size_t len, unsigned int seq,
	     unsigned int portid, mnl_cb_t cb, void *data);
int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
void __attribute__((noreturn)) kernel_failed(const char *dev);

/* qdisc_dump.c: @fn runs on each pfifo_bulk of the dump (of @ifindex) */
struct dump {
	int ifindex;		/* 0: every device */
	void (*fn)(struct dump *d, const struct nlmsghdr *nlh,
		   const struct nlattr **tb);
	void *priv;
	unsigned int count;
};

void dump_qdiscs(struct dump *d);
void read_qdiscs(struct dump *d, const char *path);
void read_opts(const struct nlattr *nest, struct pfb_qopt *o);
void read_xstats(const struct nlattr *nest, struct pfb_xstats *x);
void read_stats2(const struct nlattr *nest, const struct nlattr **st);

/* the verbs */
int do_modify(int argc, char **argv);
int do_show(int argc, char **argv);
int do_watch(int argc, char **argv);

#endif
