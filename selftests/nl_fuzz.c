// SPDX-License-Identifier: GPL-2.0
/*
 * nl_fuzz: throw malformed and random pfifo_bulk configuration at the kernel
 * over rtnetlink and check that every request is answered.
 *
 *	nl_fuzz -d DEV [-n COUNT] [-s SEED] [-H HANDLE] [-p PARENT] [-v]
 *
 * Each message is an RTM_NEWQDISC (change, replace or create) or an
 * RTM_GETQDISC for the qdisc HANDLE (default 1:) at PARENT (MAJ:MIN in
 * hex, default root, e.g. 1:2 for a child of mq) of DEV with TCA_KIND "pfifo_bulk" (now and
 * then another kind) and a TCA_OPTIONS built from random attributes: known
 * and unknown types, boundary and random values, wrong lengths, truncated
 * and oversized payloads, with and without NLA_F_NESTED, and attribute
 * lengths that run past the message. The kernel must answer each one with an
 * ACK or an error; a missing answer is a failure (exit 1). The counts of
 * sent, accepted and rejected messages are printed at the end.
 *
 * Raw netlink on purpose: a library would refuse to build most of these.
 */
#include <errno.h>
#include <stddef.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/pkt_sched_pfifo_bulk.h>

#define BUF_SIZE	16384

struct msg {
	struct nlmsghdr nh;
	struct tcmsg tc;
	unsigned char attrs[BUF_SIZE];
};

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the seed on every libc */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/* Values around every edge the policy may have. */
static uint32_t interesting_u32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 7, 8, 9, 64, 65, 1000, 1500, 1514, 65535, 65536,
		1048576, 16777216, 16777217, 0x7fffffff, 0x80000000, 0xffffffff,
	};

	if (rnd_below(4) == 0)
		return rnd();
	return v[rnd_below(sizeof(v) / sizeof(v[0]))];
}

/* put_attr: append one attribute; len_field lets the caller lie. */
static size_t put_attr(unsigned char *p, size_t room, uint16_t type,
		       uint16_t len_field, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)p;
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	if (total > room)
		return 0;
	a->nla_type = type;
	a->nla_len = len_field;
	if (len)
		memcpy(p + NLA_HDRLEN, data, len);
	memset(p + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	return total;
}

/* One random attribute inside TCA_OPTIONS. */
static size_t fuzz_option(unsigned char *p, size_t room)
{
	unsigned char data[64];
	uint16_t type = rnd_below(TCA_PFIFO_BULK_MAX + 4);
	size_t len;
	uint32_t v = interesting_u32();

	switch (rnd_below(8)) {
	case 0:		/* wrong size: 0..12 bytes of noise */
		len = rnd_below(13);
		for (size_t i = 0; i < len; i++)
			data[i] = rnd();
		break;
	case 1:		/* a u8, as the mode attributes want */
		data[0] = rnd_below(6);
		len = 1;
		break;
	case 2:		/* oversized */
		len = sizeof(data);
		memset(data, 0xff, len);
		break;
	default:	/* a u32 with an edge value */
		memcpy(data, &v, sizeof(v));
		len = sizeof(v);
		break;
	}
	if (rnd_below(3) == 0)
		type = TCA_PFIFO_BULK_MODE;
	return put_attr(p, room, type, NLA_HDRLEN + len, data, len);
}

/* TCA_OPTIONS: nested or not, sometimes with a length that lies. */
static size_t fuzz_options(unsigned char *p, size_t room)
{
	unsigned char inner[1024];
	size_t used = 0, n = rnd_below(7);
	uint16_t type = TCA_OPTIONS;
	uint16_t len_field;

	for (size_t i = 0; i < n; i++)
		used += fuzz_option(inner + used, sizeof(inner) - used);
	if (rnd_below(4))
		type |= NLA_F_NESTED;
	len_field = NLA_HDRLEN + used;
	switch (rnd_below(16)) {
	case 0:		/* claims more than the message holds */
		len_field += 4 + rnd_below(64);
		break;
	case 1:		/* truncated header */
		len_field = rnd_below(NLA_HDRLEN);
		break;
	}
	return put_attr(p, room, type, len_field, inner, used);
}

static int build(struct msg *m, int ifindex, uint32_t parent, uint32_t handle,
		 uint32_t seq)
{
	static const uint16_t flags[] = {
		0, NLM_F_CREATE | NLM_F_REPLACE, NLM_F_CREATE | NLM_F_EXCL,
		NLM_F_REPLACE,
	};
	const char *kind = "pfifo_bulk";
	unsigned char *p = m->attrs;
	size_t room = sizeof(m->attrs), used = 0;

	/* Another kind 1 time in 16, and one nobody registered 1 in 256:
	 * since 6.15 (commit "net: move replay logic to tc_modify_qdisc")
	 * the core runs modprobe for every RTM_NEWQDISC naming an unknown
	 * kind, whatever its flags. That costs 90 ms of a TCG guest's time
	 * and seconds on a KASAN kernel: at 1 in 32, 7.3's 10,000 messages
	 * took 128 s against 6.1's 27 s, and a KASAN guest did not finish
	 * in 20 minutes. About 35 such messages still cover the path.
	 */
	if (rnd_below(16) == 0)
		kind = rnd_below(16) ? "pfifo" : "nosuchqdisc";

	memset(m, 0, offsetof(struct msg, attrs));
	m->nh.nlmsg_seq = seq;
	m->tc.tcm_family = AF_UNSPEC;
	m->tc.tcm_ifindex = ifindex;
	m->tc.tcm_parent = parent;
	m->tc.tcm_handle = handle;
	if (rnd_below(8) == 0) {
		m->nh.nlmsg_type = RTM_GETQDISC;
		m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	} else {
		m->nh.nlmsg_type = RTM_NEWQDISC;
		m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
				    flags[rnd_below(4)];
		used += put_attr(p, room, TCA_KIND, NLA_HDRLEN + strlen(kind) + 1,
				 kind, strlen(kind) + 1);
		if (rnd_below(8))
			used += fuzz_options(p + used, room - used);
	}
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)) + used;
	return m->nh.nlmsg_len;
}

/* Wait for the answer to seq: 0 = ACK, 1 = error, -1 = none. */
static int answer(int fd, uint32_t seq, bool verbose)
{
	static unsigned char buf[65536];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh = (struct nlmsghdr *)buf;

		if (n < 0)
			return -1;
		for (; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			struct nlmsgerr *e;

			if (nh->nlmsg_seq != seq || nh->nlmsg_type != NLMSG_ERROR)
				continue;	/* the dump of a GET, or stale */
			e = NLMSG_DATA(nh);
			if (verbose && e->error)
				fprintf(stderr, "seq %u: %s\n", seq, strerror(-e->error));
			return e->error ? 1 : 0;
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	/* an answer takes milliseconds; a loaded host pauses the guest for
	 * hundreds of them at worst: only a lost answer waits 5 s
	 */
	struct timeval tv = { .tv_sec = 5 };
	unsigned long count = 10000, sent = 0, acked = 0, rejected = 0;
	uint32_t handle = 0x10000, parent = TC_H_ROOT;
	char *end;
	const char *dev = NULL;
	bool verbose = false;
	int one = 1, fd, ifindex, opt;
	static struct msg m;

	rng_state = (uint64_t)time(NULL) | 1;
	while ((opt = getopt(argc, argv, "d:n:s:H:p:v")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		case 'H':
			handle = strtoul(optarg, NULL, 16) << 16;
			break;
		case 'p':
			/* MAJ:MIN in hex, as tc writes it */
			parent = strtoul(optarg, &end, 16) << 16;
			if (*end == ':')
				parent |= strtoul(end + 1, NULL, 16) & 0xffff;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-n COUNT] [-s SEED] [-H HANDLE] [-p PARENT] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	ifindex = dev ? if_nametoindex(dev) : 0;
	if (!ifindex) {
		fprintf(stderr, "nl_fuzz: no device '%s'\n", dev ? dev : "");
		return 2;
	}
	printf("nl_fuzz: seed %llu\n", (unsigned long long)rng_state);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("nl_fuzz: netlink socket");
		return 2;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));

	for (sent = 0; sent < count; sent++) {
		uint32_t seq = sent + 1;
		int len = build(&m, ifindex, parent, handle, seq), r;

		if (send(fd, &m, len, 0) < 0) {
			perror("nl_fuzz: send");
			return 1;
		}
		r = answer(fd, seq, verbose);
		if (r < 0) {
			fprintf(stderr, "nl_fuzz: no answer to message %lu\n", sent + 1);
			return 1;
		}
		r ? rejected++ : acked++;
	}
	printf("nl_fuzz: sent %lu accepted %lu rejected %lu\n", sent, acked, rejected);
	close(fd);
	return 0;
}
