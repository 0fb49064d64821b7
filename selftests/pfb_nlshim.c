// SPDX-License-Identifier: GPL-2.0
/*
 * pfb_nlshim.so: answers a program's qdisc dump (RTM_GETQDISC with
 * NLM_F_DUMP on a netlink socket) with canned messages instead of the
 * kernel's, so that tc and bulkctl can print the same dump on a host whose
 * kernel has no pfifo_bulk (selftests/host_json.sh).
 *
 *	LD_PRELOAD=pfb_nlshim.so PFB_NLSHIM_FILE=FILE [PFB_NLSHIM_DONE=ERRNO
 *		[PFB_NLSHIM_MSG=TEXT]] tc -j qdisc show
 *
 * FILE holds the messages (selftests/pfb_canned.py); FILE1:FILE2:... answer
 * the first dump, the second, and so on (the last all later ones), for the
 * two samples of "bulkctl watch". They come back as one
 * datagram with the request's sequence number and the socket's port id,
 * ended by an NLMSG_DONE whose error is -ERRNO (0 without PFB_NLSHIM_DONE),
 * as a kernel ends a dump that failed half way, with TEXT as its extended
 * ack (NLMSGERR_ATTR_MSG) when given. Every other message goes
 * to the kernel.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static int dump_fd = -1;		/* the socket a dump was asked on */
static unsigned int dump_seq;
static char *reply;
static size_t reply_len;

/* The canned messages, stamped with @seq and @portid, and NLMSG_DONE. */
static void make_reply(unsigned int seq, unsigned int portid)
{
	const char *files = getenv("PFB_NLSHIM_FILE"), *err = getenv("PFB_NLSHIM_DONE");
	const char *msg = getenv("PFB_NLSHIM_MSG");
	static unsigned int dumps;
	struct nlattr *nla;
	struct nlmsghdr *nlh, *done;
	char path[4096] = "";
	unsigned int n;
	FILE *f = NULL;
	size_t cap = 1 << 20, off;

	/* the dumps-th path of the list, or its last */
	for (n = 0; files && n <= dumps && *files; n++) {
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(files, ":"), files);
		files += strcspn(files, ":");
		files += *files == ':';
	}
	dumps++;
	if (*path)
		f = fopen(path, "rb");

	reply = calloc(1, cap);
	if (!f || !reply) {
		perror("pfb_nlshim: PFB_NLSHIM_FILE");
		exit(99);
	}
	reply_len = fread(reply, 1, cap - NLMSG_SPACE(sizeof(int)) - 4096, f);
	fclose(f);
	for (off = 0; off + sizeof(*nlh) <= reply_len; off += NLMSG_ALIGN(nlh->nlmsg_len)) {
		nlh = (struct nlmsghdr *)(reply + off);
		if (nlh->nlmsg_len < sizeof(*nlh))
			break;
		nlh->nlmsg_seq = seq;
		nlh->nlmsg_pid = portid;
		nlh->nlmsg_flags |= NLM_F_MULTI;
	}
	done = (struct nlmsghdr *)(reply + reply_len);
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_flags = NLM_F_MULTI;
	done->nlmsg_seq = seq;
	done->nlmsg_pid = portid;
	*(int *)NLMSG_DATA(done) = err ? -atoi(err) : 0;
	if (msg && strlen(msg) < 1024) {
		nla = (struct nlattr *)((char *)done + NLMSG_SPACE(sizeof(int)));
		nla->nla_type = NLMSGERR_ATTR_MSG;
		nla->nla_len = NLA_HDRLEN + strlen(msg) + 1;
		strcpy((char *)nla + NLA_HDRLEN, msg);
		done->nlmsg_len = NLMSG_SPACE(sizeof(int)) + NLA_ALIGN(nla->nla_len);
		done->nlmsg_flags |= NLM_F_ACK_TLVS;
	}
	reply_len += NLMSG_ALIGN(done->nlmsg_len);
}

/* A qdisc dump request on a netlink socket: note it, and send nothing. */
static int is_dump(int fd, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	struct sockaddr_nl sa;
	socklen_t sl = sizeof(sa);

	if (len < sizeof(*nlh) || nlh->nlmsg_type != RTM_GETQDISC ||
	    !(nlh->nlmsg_flags & NLM_F_DUMP) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) || sa.nl_family != AF_NETLINK)
		return 0;
	dump_fd = fd;
	dump_seq = nlh->nlmsg_seq;
	free(reply);
	make_reply(dump_seq, sa.nl_pid);
	return 1;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *addr, socklen_t alen)
{
	ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *,
			socklen_t) = dlsym(RTLD_NEXT, "sendto");

	return is_dump(fd, buf, len) ? (ssize_t)len : real(fd, buf, len, flags, addr, alen);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return sendto(fd, buf, len, flags, NULL, 0);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t (*real)(int, const struct msghdr *, int) = dlsym(RTLD_NEXT, "sendmsg");

	if (msg->msg_iovlen == 1 &&
	    is_dump(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len))
		return msg->msg_iov[0].iov_len;
	return real(fd, msg, flags);
}

/* The reply as one datagram, MSG_PEEK and MSG_TRUNC as the kernel has them. */
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t (*real)(int, struct msghdr *, int) = dlsym(RTLD_NEXT, "recvmsg");
	struct sockaddr_nl *sa = msg->msg_name;
	size_t n;

	if (fd != dump_fd || !reply)
		return real(fd, msg, flags);
	n = reply_len < msg->msg_iov[0].iov_len ? reply_len : msg->msg_iov[0].iov_len;
	memcpy(msg->msg_iov[0].iov_base, reply, n);
	msg->msg_flags = n < reply_len ? MSG_TRUNC : 0;
	if (sa && msg->msg_namelen >= sizeof(*sa)) {
		memset(sa, 0, sizeof(*sa));
		sa->nl_family = AF_NETLINK;
		msg->msg_namelen = sizeof(*sa);
	}
	if (!(flags & MSG_PEEK)) {
		free(reply);
		reply = NULL;
		dump_fd = -1;
	}
	return flags & MSG_TRUNC ? (ssize_t)reply_len : (ssize_t)n;
}
