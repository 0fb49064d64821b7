// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl show: "tc [-s] [-j] qdisc show [dev DEV]" for the pfifo_bulk
 * qdiscs, printed by tc's own code, from the kernel or from a saved dump.
 */

#include "bulkctl.h"
#include "tc_util.h"

/*
 * The generic part is that of tc's print_qdisc() (tc/tc_qdisc.c), which
 * cannot be called here: whether it prints "dev" depends on a static that
 * only tc's own dump sets. Options and statistics print as the plugin
 * prints them, the generic statistics and estimators by tc's
 * print_tcstats_attr().
 */
static void print_one(struct dump *d, const struct tcmsg *t, struct rtattr **tb)
{
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
	pfb_read_qopt(&o, tb[TCA_OPTIONS]);
	pfb_print_qopt(&o);
	close_json_object();
	print_nl();
	if (show_stats && (tb[TCA_STATS] || tb[TCA_STATS2] || tb[TCA_XSTATS])) {
		print_tcstats_attr(stdout, tb, " ", &xstats);
		print_nl();
		if (xstats) {
			pfb_read_xstats(&x, xstats);
			pfb_print_xstats(&x);
			print_nl();
		}
	}
	close_json_object();
}

/* As tc: nothing to show is no error, and JSON is then "[]". */
int do_show(const struct args *a)
{
	struct dump d = { .ifindex = a->ifindex, .fn = print_one };

	new_json_obj(json);
	if (a->file)
		read_qdiscs(&d, a->file);
	else
		dump_qdiscs(&d);
	delete_json_obj();
	fflush(stdout);
	return 0;
}
