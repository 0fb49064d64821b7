// SPDX-License-Identifier: GPL-2.0
/*
 * bulkctl's rtnetlink socket: a request and its answers, and the kernel's
 * refusal in one line as tc prints it, with the extended ack and a hint.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "utils.h"
#include "libnetlink.h"
#include "bulkctl.h"

volatile sig_atomic_t stop;
static struct mnl_socket *nl;
static unsigned int nl_portid, nl_seq;
char nl_buf[MNL_SOCKET_DUMP_SIZE];
static char ext_msg[512];

void nl_open(void)
{
	int one = 1;

	if (nl)
		return;
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die(EXIT_KERNEL, "netlink socket: %s", strerror(errno));
	nl_portid = mnl_socket_get_portid(nl);
	nl_seq = time(NULL);
	/* Old kernels lack these; then errors just come without a message. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
}

/* iproute2's reader of the extended ack hands the kernel's message here. */
static int save_ext_msg(const char *msg, uint32_t off, const struct nlmsghdr *inner)
{
	snprintf(ext_msg, sizeof(ext_msg), "%s", msg ? msg : "");
	return 0;
}

/*
 * The error of an ACK (NLMSG_ERROR) or of the end of a dump (NLMSG_DONE):
 * libmnl's default handlers drop the extended ack, and the error of a dump.
 */
static int nl_status(int error)
{
	if (error == 0) {
		if (ext_msg[0])
			fprintf(stderr, "Warning: %s%s\n", ext_msg,
				ext_msg[strlen(ext_msg) - 1] == '.' ? "" : ".");
		return MNL_CB_STOP;
	}
	errno = -error;
	return MNL_CB_ERROR;
}

static int cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	nl_dump_ext_ack(nlh, save_ext_msg);
	return nl_status(err->error);
}

/*
 * A dump's end: its payload is an int, then the extended ack, which
 * iproute2 prints itself ("Error: MSG.").
 */
static bool done_printed;

static int cb_done(const struct nlmsghdr *nlh, void *data)
{
	int error = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(error))
		memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof(error));
	if (error && nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		done_printed = nl_dump_ext_ack_done(nlh, sizeof(error), error);
	return nl_status(error);
}

int run_msgs(const void *buf, size_t len, unsigned int seq,
	     unsigned int portid, mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = cb_error, [NLMSG_DONE] = cb_done };

	return mnl_cb_run2(buf, len, seq, portid, cb, data, ctl,
			   MNL_ARRAY_SIZE(ctl));
}

/* Send @nlh, run @cb on the answers until the ACK or the end of the dump. */
int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	unsigned int seq = ++nl_seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	ext_msg[0] = '\0';
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(nl, nl_buf, sizeof(nl_buf));
		if (n < 0)
			return -1;
		ret = run_msgs(nl_buf, n, seq, nl_portid, cb, data);
	} while (ret > MNL_CB_STOP);
	return ret;
}

/*
 * One line, as tc prints it ("Error: MSG." or "RTNETLINK answers: ..."),
 * saying what to do where the kernel's words do not.
 */
void kernel_failed(const char *dev)
{
	int e = errno;
	size_t n = strlen(ext_msg);

	if (is_json_context())
		delete_json_obj();
	if (e == EINTR && stop)		/* Ctrl-C in the middle of a dump */
		exit(0);
	if (done_printed)
		exit(EXIT_KERNEL);
	if (e == ENOENT && strstr(ext_msg, "qdisc kind is unknown"))
		fprintf(stderr, "Error: the kernel has no %s qdisc: modprobe sch_pfifo_bulk.\n",
			PFB_KIND);
	else if (e == ENOENT && strcmp(verb, "change") == 0 && strstr(ext_msg, "NLM_F_CREATE"))
		fprintf(stderr, "Error: no qdisc to change on %s (the kernel changes no default one, handle 0): use add or replace.\n",
			shown(dev));
	else if (e == EINVAL && strcmp(verb, "change") == 0 &&
		 strstr(ext_msg, "Invalid qdisc name"))
		fprintf(stderr, "Error: the qdisc on %s is not %s: use replace.\n",
			shown(dev), PFB_KIND);
	else if (n)
		fprintf(stderr, "Error: %s%s\n", ext_msg, ext_msg[n - 1] == '.' ? "" : ".");
	else
		fprintf(stderr, "RTNETLINK answers: %s%s\n", strerror(e),
			e == EPERM ? " (changing a qdisc needs CAP_NET_ADMIN)" : "");
	exit(EXIT_KERNEL);
}

