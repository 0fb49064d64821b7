// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl show: "tc [-s] [-j] qdisc show [dev DEV]" for the pfifo_bulk
 * qdiscs, printed by tc's own code, from the kernel or from a saved dump.
 */

#include <stdio.h>
#include <string.h>

#include "utils.h"
#include "tc_util.h"
#include "bulkctl.h"


/*
 * "tc [-s] [-j] qdisc show [dev DEV]", line for line: tc's print_qdisc()
 * (tc/tc_qdisc.c) for one pfifo_bulk, with tc's own helpers.
 */
static void print_qdisc(struct dump *d, const struct nlmsghdr *nlh,
			const struct nlattr **tb)
{
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);
	struct rtattr *xstats = NULL;
	struct pfb_xstats x;
	struct pfb_qopt o;
	char b[SPRINT_BSIZE];

	open_json_object(NULL);
	print_string(PRINT_ANY, "kind", "qdisc %s", PFB_KIND);
	snprintf(b, sizeof(b), "%x:", t->tcm_handle >> 16);
	print_string(PRINT_ANY, "handle", " %s", b);
	print_string(PRINT_FP, NULL, " ", NULL);
	if (!d->ifindex)
		print_devname(PRINT_ANY, t->tcm_ifindex);
	if (t->tcm_parent == TC_H_ROOT) {
		print_bool(PRINT_ANY, "root", "root ", true);
	} else if (t->tcm_parent) {
		print_tc_classid(b, sizeof(b), t->tcm_parent);
		print_string(PRINT_ANY, "parent", "parent %s ", b);
	}
	if (t->tcm_info != 1)
		print_uint(PRINT_ANY, "refcnt", "refcnt %u ", t->tcm_info);
	open_json_object("options");
	read_opts(tb[TCA_OPTIONS], &o);
	pfb_print_qopt(&o);
	close_json_object();
	print_nl();
	if (show_stats && (tb[TCA_STATS] || tb[TCA_STATS2] || tb[TCA_XSTATS])) {
		/* struct nlattr and struct rtattr are the same header */
		print_tcstats_attr(stdout, (struct rtattr **)tb, " ", &xstats);
		print_nl();
		if (xstats) {
			read_xstats((const struct nlattr *)xstats, &x);
			pfb_print_xstats(&x);
			print_nl();
		}
	}
	close_json_object();
}

int do_show(int argc, char **argv)
{
	struct dump d = { .fn = print_qdisc };
	const char *dev = NULL, *file = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (common_word(&i, argc, argv, &dev))
			continue;
		if (strcmp(argv[i], "file") != 0)
			bad_arg("unknown argument \"%s\"; try \"bulkctl show help\"",
				shown(argv[i]));
		if (file)
			bad_arg("duplicate \"file\"");
		file = next_value(&i, argc, argv);
	}
	if (dev)
		d.ifindex = dev_index(dev);

	/* As tc: nothing to show is no error, and JSON is then "[]". */
	new_json_obj(json);
	if (file) {
		read_qdiscs(&d, file);
	} else {
		nl_open();
		dump_qdiscs(&d);
	}
	delete_json_obj();
	fflush(stdout);
	return 0;
}

