// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl - configure and watch pfifo_bulk qdiscs over rtnetlink (libmnl).
 *
 * What it adds to "tc ... pfifo_bulk": it needs no tc plugin, and "watch"
 * prints batch rates per qdisc. Everything else is tc's: the grammar (global
 * options before the verb, an optional "dev"), and the output of
 * "tc [-s] [-j] qdisc show", because it is made by tc's own code: iproute2's
 * library (print_*(), the JSON writer, get_size(), get_time(),
 * get_tc_classid(), print_tcstats_attr(), ...) is compiled from the iproute2
 * source at build time (Makefile), and the options and statistics print
 * through the printers the tc plugin uses (tools/include/pfifo_bulk_user.h).
 * What is ours: the netlink requests and their errors in one line with the
 * kernel's extended ack and a hint where it helps, and watch. Ranges are the
 * kernel's: its message names the option and the range.
 *
 * Exit status: 0 success, 1 bad arguments or unknown device, 2 the kernel
 * refused, or there is no pfifo_bulk to watch.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "utils.h"
#include "tc_util.h"
#include "ll_map.h"
#include "namespace.h"
#include "bulkctl.h"

#ifndef BULKCTL_VERSION
#define BULKCTL_VERSION "1.0"
#endif

/*
 * The globals iproute2's library reads, which tc.c defines; weak, as some
 * iproute2 versions define some of them in lib/ (use_iec: utils.c in 6.15).
 */
#define WEAK __attribute__((weak))
WEAK int show_stats, show_details, show_raw, show_graph, oneline, brief;
WEAK int json, use_iec, numeric, timestamp, batch_mode, force;
WEAK bool use_names;

const char *verb = "";

void usage(FILE *f)
{
	fprintf(f,
		"Usage: bulkctl [ OPTIONS ] { add | change | replace } [ dev ] DEV\n"
		"               [ root | parent ID ] [ handle ID ] [ limit PACKETS ]\n"
		"               [ bulk_bytes SIZE ] [ bulk_pkts PACKETS ] [ mode auto|bql|nobql ]\n"
		"               [ coalesce_usecs TIME ] [ coalesce_pkts PACKETS ]\n"
		"       bulkctl [ OPTIONS ] delete [ dev ] DEV [ root | parent ID ] [ handle ID ]\n"
		"       bulkctl [ OPTIONS ] show [ [ dev ] DEV ] [ file FILE ]\n"
		"       bulkctl [ OPTIONS ] watch [ dev ] DEV [ interval SECONDS ] [ count N ]\n"
		"       bulkctl [ OPTIONS ] -b[atch] FILE\n"
		"       bulkctl { help | -h | -V }\n"
		"OPTIONS := { -s[tats] | -j[son] | -p[retty] | -n[etns] NAME | -h[elp] | -V[ersion] }\n"
		"ID: as tc's (root, none, 1:, 1:2, :2); PACKETS: any base (0x400);\n"
		"SIZE: tc's (1500, 64k, 1m; 0 = no cap); TIME: tc's (800us, 1ms; a number is us).\n"
		"The kernel checks the ranges.\n");
}

/*
 * An argument as it may be shown in a message: control and non-ASCII bytes
 * as \xNN and long ones cut, so that a message stays on one line whatever
 * was typed. Two rotating buffers: a message shows at most two arguments.
 */
const char *shown(const char *s)
{
	static char bufs[2][4 * 64 + 8];
	static unsigned int next;
	char *buf = bufs[next++ % 2], *p = buf;
	size_t n;

	for (n = 0; *s && n < 64; s++, n++) {
		unsigned char c = *s;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = c;
	}
	strcpy(p, *s ? "..." : "");
	return buf;
}

/* "bulkctl: [VERB: ]MESSAGE", one line on stderr, and exit. */
void die(int status, const char *fmt, ...)
{
	va_list ap;

	if (is_json_context())	/* a JSON array stays whole */
		delete_json_obj();
	fprintf(stderr, "bulkctl: ");
	if (*verb)
		fprintf(stderr, "%s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* ---- arguments, tc's rules --------------------------------------------------- */

const char *next_value(int *i, int argc, char **argv)
{
	if (*i + 1 >= argc)
		bad_arg("missing value for \"%s\"", shown(argv[*i]));
	return argv[++*i];
}

static void set_once(bool *has, const char *word)
{
	if (*has)
		bad_arg("duplicate \"%s\"", shown(word));
	*has = true;
}

static void set_dev(const char **dev, const char *name)
{
	if (*dev)
		bad_arg("duplicate \"dev\"");
	if (!*name || strlen(name) >= IFNAMSIZ)
		bad_arg("invalid device name \"%s\"", shown(name));
	*dev = name;
}

/*
 * "[dev] DEV" and "help", common to every verb: true when argv[*i] was one
 * of them. A bare word is the device, as in ip and tc.
 */
bool common_word(int *i, int argc, char **argv, const char **dev)
{
	static const char *const words[] = {
		"root", "parent", "handle", "file", "interval", "count",
	};
	const char *w = argv[*i];
	size_t k;

	if (strcmp(w, "help") == 0) {
		usage(stdout);
		exit(0);
	}
	if (strcmp(w, "dev") == 0) {
		set_dev(dev, next_value(i, argc, argv));
		return true;
	}
	for (k = 0; k < ARRAY_SIZE(words); k++)
		if (strcmp(w, words[k]) == 0)
			return false;
	if (pfb_opt_type(w) || *dev)
		return false;
	set_dev(dev, w);
	return true;
}

int dev_index(const char *dev)
{
	int idx;

	if (!dev)
		bad_arg("missing DEV");
	idx = ll_name_to_index(dev);
	if (!idx)
		bad_arg("cannot find device \"%s\"", shown(dev));
	return idx;
}

/* ---- add, change, replace, delete ------------------------------------------------ */

int do_modify(int argc, char **argv)
{
	bool del = strcmp(verb, "delete") == 0, has_parent = false, has_handle = false;
	bool has[TCA_PFIFO_BULK_MAX + 1] = {};
	__u32 val[TCA_PFIFO_BULK_MAX + 1] = {};
	__u32 parent = TC_H_ROOT, handle = 0;
	const char *dev = NULL, *v;
	struct nlattr *nest = NULL;
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	int i, type;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(w, "root") == 0) {
			set_once(&has_parent, "root/parent");
			continue;
		}
		if (strcmp(w, "parent") == 0) {
			set_once(&has_parent, "root/parent");
			v = next_value(&i, argc, argv);
			if (get_tc_classid(&parent, v))
				bad_arg("invalid \"parent\": \"%s\" (root, none, MAJ:MIN or :MIN in hex)",
					shown(v));
			continue;
		}
		if (strcmp(w, "handle") == 0) {
			set_once(&has_handle, w);
			v = next_value(&i, argc, argv);
			if (get_qdisc_handle(&handle, v))
				bad_arg("invalid \"handle\": \"%s\" (MAJ: in hex, or none)", shown(v));
			continue;
		}
		type = del ? 0 : pfb_opt_type(w);
		/* "add limt 5": the typo was taken for the device */
		if (!type && dev)
			dev_index(dev);
		if (!type)
			bad_arg("unknown argument \"%s\"; try \"bulkctl %s help\"",
				shown(w), verb);
		set_once(&has[type], w);
		v = next_value(&i, argc, argv);
		if (pfb_opt_parse(type, v, &val[type]))
			bad_arg("invalid \"%s\": \"%s\" (%s)", w, shown(v),
				pfb_opt_syntax[type]);
	}

	nlh = mnl_nlmsg_put_header(nl_buf);
	nlh->nlmsg_type = del ? RTM_DELQDISC : RTM_NEWQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (strcmp(verb, "add") == 0)
		nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
	else if (strcmp(verb, "replace") == 0)
		nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = dev_index(dev);
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	/* On delete the kind makes the kernel refuse to remove another qdisc. */
	mnl_attr_put_strz(nlh, TCA_KIND, PFB_KIND);

	/* Only what was given: "change" leaves the rest as it is. */
	for (type = TCA_PFIFO_BULK_LIMIT; type <= TCA_PFIFO_BULK_MAX; type++) {
		if (!has[type])
			continue;
		if (!nest)
			nest = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		if (pfb_opt_is_u8(type))
			mnl_attr_put_u8(nlh, type, val[type]);
		else
			mnl_attr_put_u32(nlh, type, val[type]);
	}
	if (nest)
		mnl_attr_nest_end(nlh, nest);

	nl_open();
	if (nl_talk(nlh, NULL, NULL) < 0)
		kernel_failed(dev);
	return 0;
}

/* ---- main ------------------------------------------------------------------------- */

static int do_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

/* The verbs, tried in this order with tc's matches(): "d" is delete. */
static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "add", do_modify }, { "change", do_modify }, { "replace", do_modify },
	{ "delete", do_modify }, { "show", do_show }, { "list", do_show },
	{ "watch", do_watch }, { "help", do_help },
};

static int do_cmd(int argc, char **argv, void *data)
{
	const struct cmd *c;

	verb = "";		/* -batch: the previous line's is done */
	for (c = cmds; c < cmds + ARRAY_SIZE(cmds); c++) {
		if (matches(argv[0], c->name) == 0) {
			verb = c->name;
			return c->fn(argc - 1, argv + 1);
		}
	}
	bad_arg("unknown command \"%s\"; try \"bulkctl help\"", shown(argv[0]));
}

int main(int argc, char **argv)
{
	const char *batch = NULL;
	char *netns = NULL;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *opt = argv[0] + (argv[0][1] == '-');	/* --json */

		if (matches(opt, "-json") == 0) {
			json = 1;
		} else if (matches(opt, "-pretty") == 0) {
			pretty = 1;
		} else if (matches(opt, "-stats") == 0 ||
			   matches(opt, "-statistics") == 0) {
			show_stats = 1;
		} else if (matches(opt, "-netns") == 0) {
			if (argc < 2)
				bad_arg("missing value for \"%s\"", shown(argv[0]));
			netns = *++argv;
			argc--;
		} else if (matches(opt, "-batch") == 0) {
			if (argc < 2)
				bad_arg("missing value for \"%s\"", shown(argv[0]));
			batch = *++argv;
			argc--;
		} else if (matches(opt, "-help") == 0) {
			usage(stdout);
			return 0;
		} else if (matches(opt, "-Version") == 0 || matches(opt, "-version") == 0) {
			printf("bulkctl %s\n", BULKCTL_VERSION);
			return 0;
		} else {
			bad_arg("unknown option \"%s\"; try \"bulkctl help\"", shown(argv[0]));
		}
	}
	if (netns && (!*netns || strchr(netns, '/') || !strcmp(netns, ".") ||
		      !strcmp(netns, "..")))
		bad_arg("invalid network namespace name \"%s\"", shown(netns));
	if (netns && netns_switch(netns))	/* it says why */
		return EXIT_USAGE;
	/* One command per line, as tc -batch; the first to fail ends it. */
	if (batch)
		return do_batch(batch, false, do_cmd, NULL);
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return do_cmd(argc, argv, NULL);
}
