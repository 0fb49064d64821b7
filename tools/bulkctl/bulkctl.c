// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl - configure and watch pfifo_bulk qdiscs, with tc's grammar and
 * tc's output (bulkctl(8)), without a tc plugin; watch is its own.
 *
 * What iproute2 has, bulkctl takes from it: its library (the JSON writer
 * and print_*(), the parsers of sizes, times and handles, netlink, netns,
 * -batch) is compiled from the iproute2 source at build time (Makefile),
 * and options and statistics print through the tc plugin's printers
 * (tools/include/pfifo_bulk_user.h). Ranges are the kernel's: its message
 * names the option and the range.
 *
 * Exit status: 0 success, 1 bad arguments or unknown device, 2 the kernel
 * refused or a dump failed, or there is no pfifo_bulk to watch.
 */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>

#include "bulkctl.h"
#include "tc_util.h"
#include "ll_map.h"
#include "namespace.h"

/*
 * The globals iproute2's library reads, which tc.c defines; weak, as some
 * iproute2 versions define some of them in lib/ (use_iec: utils.c in 6.15).
 */
#define WEAK __attribute__((weak))
WEAK int show_stats, show_details, show_raw, show_graph, oneline, brief;
WEAK int json, use_iec, numeric, timestamp, batch_mode, force;
WEAK bool use_names;

const char *verb = "";

/* Asked for, on stdout: exit status 0; on stderr, after a mistake: 1. */
static int usage(FILE *f)
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
		"ID: root, none, or in hex MAJ:MIN, MAJ:, :MIN (1:2, 1:, :2); PACKETS: any base;\n"
		"SIZE: tc's (1500, 64k, 1m; 0 = no cap); TIME: tc's (800us, 1ms; a number is us).\n"
		"The kernel checks the ranges.\n");
	return f == stdout ? 0 : EXIT_USAGE;
}

/*
 * An argument as it may be shown in a message: control and non-ASCII bytes
 * as \xNN and long ones cut, so that a message stays on one line whatever
 * was typed. No message shows two.
 */
const char *shown(const char *s)
{
	static char buf[4 * 64 + 8];
	char *p = buf;
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

/* Exit; a JSON array being printed is closed first, so that it stays whole. */
void quit(int status)
{
	if (is_json_context())
		delete_json_obj();
	exit(status);
}

/* "bulkctl: [VERB: ]MESSAGE", one line on stderr, and exit. */
void die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bulkctl: %s%s", verb, *verb ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	quit(status);
}

static char *next_value(int *i, int argc, char **argv)
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

static void set_dev(struct args *a, const char *name)
{
	if (a->dev)
		bad_arg("duplicate \"dev\"");
	if (!*name || strlen(name) >= IFNAMSIZ)
		bad_arg("invalid device name \"%s\"", shown(name));
	a->dev = name;
}

static void find_dev(struct args *a)
{
	a->ifindex = ll_name_to_index(a->dev);
	if (!a->ifindex)
		bad_arg("cannot find device \"%s\"", shown(a->dev));
}

/*
 * A hexadecimal number of at most 16 bits at *@s, which is moved past it:
 * hex digits only, where strtoul() would also take a sign, spaces and "0x"
 * and keep the low bits of what overflows.
 */
static bool get_hex16(const char **s, __u32 *v)
{
	const char *p = *s;

	for (*v = 0; isxdigit((unsigned char)*p) && *v <= 0xffff; p++)
		*v = *v * 16 + (isdigit((unsigned char)*p) ? *p - '0' :
				 tolower((unsigned char)*p) - 'a' + 10);
	if (p == *s || *v > 0xffff)
		return false;
	*s = p;
	return true;
}

/*
 * A parent as show prints it: root, none, MAJ:MIN, MAJ: or :MIN. tc's
 * get_tc_classid() also reads a bare number, as the whole 32-bit ID (1 is
 * :1, easily taken for 1:); bulkctl refuses it.
 */
static int parse_parent(const char *s, __u32 *id)
{
	__u32 maj = 0, min = 0;
	bool has_maj;

	if (strcmp(s, "root") == 0 || strcmp(s, "none") == 0) {
		*id = *s == 'r' ? TC_H_ROOT : TC_H_UNSPEC;
		return 0;
	}
	has_maj = *s != ':';
	if ((has_maj && !get_hex16(&s, &maj)) || *s++ != ':' ||
	    (*s && !get_hex16(&s, &min)) || *s || (!has_maj && !min))
		return -1;
	*id = TC_H_MAKE(maj << 16, min);
	return 0;
}

/* A qdisc's handle: MAJ: or MAJ, or none; tc's takes "1:2" for 1:. */
static int parse_handle(const char *s, __u32 *h)
{
	__u32 maj;

	if (strcmp(s, "none") == 0) {
		*h = 0;
		return 0;
	}
	if (!get_hex16(&s, &maj) || (*s == ':' && *++s) || *s)
		return -1;
	*h = maj << 16;
	return 0;
}

/* A word that is never a device, whatever the verb. */
static bool keyword(const char *w)
{
	static const char *const words[] = {
		"root", "parent", "handle", "file", "interval", "count",
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(words); k++)
		if (strcmp(w, words[k]) == 0)
			return true;
	return pfb_opt_type(w);
}

/*
 * "[dev] DEV" (a bare word is the device, as in ip and tc), "help", and the
 * @words the verb takes, each once.
 */
static void parse_args(int argc, char **argv, unsigned int words, struct args *a)
{
	bool has_parent = false, has_handle = false, has_file = false;
	bool has_interval = false, has_count = false;
	const char *w, *v;
	char *end;
	int i, type;

	memset(a, 0, sizeof(*a));
	a->parent = TC_H_ROOT;
	a->interval = 1.0;
	for (i = 0; i < argc; i++) {
		w = argv[i];
		type = words & W_OPTS ? pfb_opt_type(w) : 0;
		if (strcmp(w, "help") == 0) {
			exit(usage(stdout));
		} else if (strcmp(w, "dev") == 0) {
			set_dev(a, next_value(&i, argc, argv));
		} else if (!a->dev && !keyword(w)) {
			set_dev(a, w);
		} else if (words & W_PLACE && strcmp(w, "root") == 0) {
			set_once(&has_parent, "root/parent");
		} else if (words & W_PLACE && strcmp(w, "parent") == 0) {
			set_once(&has_parent, "root/parent");
			v = next_value(&i, argc, argv);
			if (parse_parent(v, &a->parent))
				bad_arg("invalid \"parent\": \"%s\" (root, none, MAJ:MIN, MAJ: or :MIN; hex, up to ffff)",
					shown(v));
		} else if (words & W_PLACE && strcmp(w, "handle") == 0) {
			set_once(&has_handle, w);
			v = next_value(&i, argc, argv);
			if (parse_handle(v, &a->handle))
				bad_arg("invalid \"handle\": \"%s\" (MAJ: in hex, up to ffff, or none)", shown(v));
		} else if (type) {
			set_once(&a->has[type], w);
			v = next_value(&i, argc, argv);
			if (pfb_opt_parse(type, v, &a->val[type]))
				bad_arg("invalid \"%s\": \"%s\" (%s)", w, shown(v),
					pfb_opt_syntax[type]);
		} else if (words & W_FILE && strcmp(w, "file") == 0) {
			set_once(&has_file, w);
			a->file = next_value(&i, argc, argv);
		} else if (words & W_WATCH && strcmp(w, "interval") == 0) {
			set_once(&has_interval, w);
			v = next_value(&i, argc, argv);
			a->interval = strtod(v, &end);
			if (end == v || *end || !(a->interval >= 0.1 && a->interval <= 3600))
				bad_arg("invalid \"interval\": \"%s\" (0.1..3600 seconds)", shown(v));
		} else if (words & W_WATCH && strcmp(w, "count") == 0) {
			set_once(&has_count, w);
			v = next_value(&i, argc, argv);
			/* a digit first: get_u32() takes "-4294967295" for 1 */
			if (!isdigit((unsigned char)*v) || get_u32(&a->count, v, 0) ||
			    a->count < 1)
				bad_arg("invalid \"count\": \"%s\" (a number from 1)", shown(v));
		} else {
			if (a->dev)	/* "add limt 5": the typo was taken for the device */
				find_dev(a);
			bad_arg("unknown argument \"%s\"; try \"bulkctl %s help\"",
				shown(w), verb);
		}
	}
	if (a->dev)
		find_dev(a);
	else if (words & W_DEV)
		bad_arg("missing DEV");
}

/*
 * The verbs, tried in this order with tc's matches() ("d" is delete), and
 * the words each takes.
 */
static const struct cmd {
	const char *name;
	int (*fn)(const struct args *a);
	unsigned int words;
} cmds[] = {
	{ "add", do_modify, W_DEV | W_PLACE | W_OPTS },
	{ "change", do_modify, W_DEV | W_PLACE | W_OPTS },
	{ "replace", do_modify, W_DEV | W_PLACE | W_OPTS },
	{ "delete", do_modify, W_DEV | W_PLACE },
	{ "show", do_show, W_FILE }, { "list", do_show, W_FILE },
	{ "watch", do_watch, W_DEV | W_WATCH }, { "help", NULL, 0 },
};

static int do_cmd(int argc, char **argv, void *data)
{
	const struct cmd *c;
	struct args a;

	verb = "";		/* -batch: the previous line's is done */
	for (c = cmds; c < cmds + ARRAY_SIZE(cmds); c++) {
		if (matches(argv[0], c->name))
			continue;
		verb = c->name;
		if (!c->fn)
			return usage(stdout);
		parse_args(argc - 1, argv + 1, c->words, &a);
		return c->fn(&a);
	}
	bad_arg("unknown command \"%s\"; try \"bulkctl help\"", shown(argv[0]));
}

int main(int argc, char **argv)
{
	char *batch = NULL, *netns = NULL, *c;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *opt = argv[i] + (argv[i][1] == '-');	/* --json */

		/* "-" and "--": to matches(), a prefix of every option */
		if (!opt[1]) {
			bad_arg("unknown option \"%s\"; try \"bulkctl help\"", shown(argv[i]));
		} else if (matches(opt, "-json") == 0) {
			json = 1;
		} else if (matches(opt, "-pretty") == 0) {
			pretty = 1;
		} else if (matches(opt, "-stats") == 0 ||
			   matches(opt, "-statistics") == 0) {
			show_stats = 1;
		} else if (matches(opt, "-netns") == 0) {
			netns = next_value(&i, argc, argv);
		} else if (matches(opt, "-batch") == 0) {
			batch = next_value(&i, argc, argv);
		} else if (matches(opt, "-help") == 0) {
			return usage(stdout);
		} else if (matches(opt, "-Version") == 0 || matches(opt, "-version") == 0) {
			printf("bulkctl %s\n", BULKCTL_VERSION);
			return 0;
		} else {
			bad_arg("unknown option \"%s\"; try \"bulkctl help\"", shown(argv[i]));
		}
	}
	/* a file of /run/netns, and printable: iproute2's message shows it */
	for (c = netns; c && *c && !iscntrl((unsigned char)*c); c++)
		;
	if (netns && (!*netns || *c || strchr(netns, '/') ||
		      !strcmp(netns, ".") || !strcmp(netns, "..")))
		bad_arg("invalid network namespace name \"%s\"", shown(netns));
	if (netns && netns_switch(netns))	/* it says why */
		return EXIT_USAGE;
	/* One command per line, as tc -batch; the first to fail ends it. */
	if (batch && i < argc)
		bad_arg("unexpected \"%s\" after \"-batch FILE\"", shown(argv[i]));
	if (batch)
		return do_batch(batch, false, do_cmd, NULL);
	if (i == argc)
		return usage(stderr);
	return do_cmd(argc - i, argv + i, NULL);
}
