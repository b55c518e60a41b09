/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoke-seat --cutter: the part of revoke-seat that stops and cuts
 * processes (revoke-seat-cut.service, started by revoke-seat-cut.socket).
 *
 * Why a process of its own: the kernel lets a tracer suspend the seccomp
 * filter of a process it stops (PTRACE_O_SUSPEND_SECCOMP, which librevoke
 * needs to stop any process under a filter) only if the tracer is under no
 * filter itself, and the programs that hold a seat's devices are often
 * under one (Debian 12's pipewire.service has SystemCallFilter=). So the
 * cutter runs without a system call filter, with the capabilities the
 * engine uses, and takes requests only from root on a socket only root may
 * reach; revoke-seat itself, which reads logind, udev and its configuration,
 * runs under a filter without any capability.
 *
 * One request at a time, one datagram each way (cutproto.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "seat.h"

static void answer(int c, const char *msg, int len)
{
	if (len > 0 && send(c, msg, (size_t)len, MSG_NOSIGNAL) < 0)
		say(LOG_WARNING, "cutter: reply: %m");
}

static void serve(int c)
{
	static char msg[CUT_MSG_MAX + 1], out[CUT_MSG_MAX];
	static struct cut_request q;
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != 0) {
		say(LOG_WARNING, "cutter: a connection not from root (uid %u): refused",
		    (unsigned)cred.uid);
		return;
	}
	for (;;) {
		ssize_t n = recv(c, msg, sizeof(msg), 0);
		int len;

		if (n <= 0)
			return;
		if (cut_request_parse(msg, (size_t)n, &q) < 0) {
			len = snprintf(out, sizeof(out), "error %d", EBADMSG);
			answer(c, out, len);
			continue;
		}
		if (q.list) {
			const char *devs[CUT_MAX_DEVS];
			bool held[CUT_MAX_DEVS];
			int r;

			for (size_t i = 0; i < q.ndevs; i++)
				devs[i] = q.devs[i];
			r = cut_list_held(q.uid, q.timeout_ms, devs, q.ndevs, held);
			len = r < 0 ? snprintf(out, sizeof(out), "error %d", -r)
				    : cut_held_format(held, q.ndevs, out, sizeof(out));
		} else if (q.all) {
			static struct cut_all_result all;
			const char *devs[CUT_MAX_DEVS];

			for (size_t i = 0; i < q.ndevs; i++)
				devs[i] = q.devs[i];
			cut_devices(q.uid, q.timeout_ms, q.dry_run, devs, q.ndevs, &all);
			len = cut_all_format(&all, out, sizeof(out));
		} else {
			struct cut_result res;

			cut_device(q.uid, q.timeout_ms, q.dry_run, q.devs[0], &res);
			len = cut_reply_format(&res, out, sizeof(out));
		}
		answer(c, out, len);
	}
}

int cutter_main(void)
{
	int fd, n = sd_listen_fds(1);

	if (n != 1) {
		say(LOG_ERR,
		    "cutter: expected one socket from systemd (revoke-seat-cut.socket), "
		    "got %d",
		    n);
		return 1;
	}
	fd = SD_LISTEN_FDS_START;
	if (!cut_library_selects())
		say(LOG_ERR, "cutter: this librevoke cannot revoke from one user's processes "
			     "(1.4 can): every request will be refused");
	sd_notify(0, "READY=1");
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			say(LOG_ERR, "cutter: accept: %m");
			return 1;
		}
		serve(c);
		close(c);
	}
}
