/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tc plugin (tc-plugin/q_pfifo_bulk.c) and bulkctl share: the
 * accepted ranges of every option, the mode names, and the JSON key names of
 * the options and of the extended statistics. Both tools check values against
 * these ranges before anything is sent, and they are the ranges of the
 * kernel's netlink policy, so a value is refused with the same bounds
 * whichever tool is used. One header, so the two tools cannot drift apart.
 */
#ifndef PFIFO_BULK_USER_H
#define PFIFO_BULK_USER_H

#include <linux/pkt_sched_pfifo_bulk.h>

#define PFB_KIND		"pfifo_bulk"

#define PFB_LIMIT_MIN		1U		/* packets */
#define PFB_LIMIT_MAX		16777216U
#define PFB_BULK_BYTES_MIN	0U		/* 0: no byte cap */
#define PFB_BULK_BYTES_MAX	16777216U	/* 16 MiB */
#define PFB_BULK_PKTS_MIN	0U		/* 0: no packet cap */
#define PFB_BULK_PKTS_MAX	65536U

static const char *const pfb_mode_names[] = {
	[TC_PFIFO_BULK_MODE_AUTO]	= "auto",
	[TC_PFIFO_BULK_MODE_BQL]	= "bql",
	[TC_PFIFO_BULK_MODE_NOBQL]	= "nobql",
	[TC_PFIFO_BULK_MODE_NONE]	= "none",	/* effective mode only */
};

/*
 * JSON keys of the batch histogram buckets, indexed by their attribute
 * (TCA_PFIFO_BULK_HIST_*). They also label the buckets in text output.
 */
static const char *const pfb_hist_keys[TCA_PFIFO_BULK_HIST_MAX + 1] = {
	[TCA_PFIFO_BULK_HIST_1]		= "1",
	[TCA_PFIFO_BULK_HIST_2]		= "2",
	[TCA_PFIFO_BULK_HIST_3_4]	= "3-4",
	[TCA_PFIFO_BULK_HIST_5_8]	= "5-8",
	[TCA_PFIFO_BULK_HIST_9_16]	= "9-16",
	[TCA_PFIFO_BULK_HIST_17_32]	= "17-32",
	[TCA_PFIFO_BULK_HIST_33_64]	= "33-64",
	[TCA_PFIFO_BULK_HIST_65_UP]	= "65+",
};

static inline const char *pfb_mode_name(unsigned int mode)
{
	if (mode > TC_PFIFO_BULK_MODE_MAX)
		return NULL;
	return pfb_mode_names[mode];
}

/* Only the modes one can ask for: auto, bql, nobql. */
static inline int pfb_mode_parse(const char *s)
{
	unsigned int i;

	for (i = 0; i <= TC_PFIFO_BULK_MODE_NOBQL; i++)
		if (strcmp(s, pfb_mode_names[i]) == 0)
			return i;
	return -1;
}

/*
 * Sizes print exactly, so that what "show" prints can be pasted back as an
 * argument: a multiple of 1 MiB as "NMb", of 1 KiB as "NKb", otherwise "Nb".
 * (tc's own print_size rounds, e.g. 65540 to "64Kb".)
 */
static inline const char *pfb_sprint_size(unsigned int v, char *buf, size_t len)
{
	if (v && v % (1024 * 1024) == 0)
		snprintf(buf, len, "%uMb", v / (1024 * 1024));
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%uKb", v / 1024);
	else
		snprintf(buf, len, "%ub", v);
	return buf;
}

#endif /* PFIFO_BULK_USER_H */
