/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event loops learn of a revocation: a holder blocked in epoll_wait, poll or
 * select on a revoked socket, FIFO, pipe or terminal wakes with an error or
 * hangup event (epoll: EPOLLHUP|EPOLLERR with the registration's own data;
 * poll: POLLNVAL; select: the descriptor ready, as select reports one it
 * cannot poll), and its read of the descriptor then fails with EBADF. It never sleeps on because
 * its registration silently vanished with the file.
 */
#include <poll.h>
#include <pty.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>

#include "conform.h"

enum { W_EPOLL, W_POLL, W_SELECT };
static const char *const how_name[] = {"epoll_wait", "poll", "select"};

#define HOLD_FD	  40
#define EPOLL_FD  41
#define PEER_FD	  42
#define EPOLL_TAG 0x1234567890abcdefull

static int g_how;
static int g_kind;
static char g_pts[64];

enum { K_SOCKET, K_FIFO, K_PIPE, K_TTY, NKINDS };
static const char *const kind_name[] = {"socket", "FIFO", "pipe", "tty"};

/* The holder: makes the descriptor (kept at HOLD_FD), waits on it, reports
 * how the wait ended, then reads it. */
static void v_waiter(int sock)
{
	int fd = -1, peer = -1, r = 0, e = 0, rd, rde;
	int64_t events = 0, data = 0;
	char c;

	switch (g_kind) {
	case K_SOCKET: {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			_exit(2);
		fd = sv[0];
		peer = sv[1];
		break;
	}
	case K_FIFO:
		fd = open(tpath, O_RDWR | O_CLOEXEC); /* RDWR: no wait for a writer */
		break;
	case K_PIPE: {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			_exit(2);
		fd = p[0];
		peer = p[1];
		break;
	}
	case K_TTY:
		fd = open(g_pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
		break;
	}
	if (fd < 0 || dup2(fd, HOLD_FD) != HOLD_FD)
		_exit(2);
	close(fd);
	if (peer >= 0 && (dup2(peer, PEER_FD) != PEER_FD || close(peer) < 0))
		_exit(2);
	send_msg(sock, MSG(getpid()));

	errno = 0;
	if (g_how == W_EPOLL) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EPOLL_TAG}, out[4];
		int ep = epoll_create1(EPOLL_CLOEXEC);

		if (ep < 0 || dup2(ep, EPOLL_FD) != EPOLL_FD ||
		    epoll_ctl(EPOLL_FD, EPOLL_CTL_ADD, HOLD_FD, &ev) < 0)
			_exit(2);
		close(ep);
		send_msg(sock, MSG(1));
		/* As event loops do: an interrupted wait is waited again. */
		do
			r = epoll_wait(EPOLL_FD, out, 4, 20000);
		while (r < 0 && errno == EINTR);
		e = r < 0 ? errno : 0;
		if (r > 0) {
			events = out[0].events;
			data = (int64_t)out[0].data.u64;
		}
	} else if (g_how == W_POLL) {
		struct pollfd p = {.fd = HOLD_FD, .events = POLLIN};

		send_msg(sock, MSG(1));
		do
			r = poll(&p, 1, 20000);
		while (r < 0 && errno == EINTR);
		e = r < 0 ? errno : 0;
		events = p.revents;
	} else {
		fd_set rfds;
		struct timeval tv;

		send_msg(sock, MSG(1));
		do {
			FD_ZERO(&rfds);
			FD_SET(HOLD_FD, &rfds);
			tv = (struct timeval){20, 0};
			r = select(HOLD_FD + 1, &rfds, NULL, NULL, &tv);
		} while (r < 0 && errno == EINTR);
		e = r < 0 ? errno : 0;
	}
	errno = 0;
	rd = (int)read(HOLD_FD, &c, 1);
	rde = rd < 0 ? errno : 0;
	send_msg(sock, MSG(r, e, events, data, rd, rde));
	msg_wait(sock);
}

static void check(int kind, int how)
{
	char path[192];
	struct victim v;
	struct msg m;
	int master = -1, slave = -1;

	make_scratch();
	g_kind = kind;
	g_how = how;
	if (kind == K_FIFO)
		CHECK(mkfifo(tpath, 0600) == 0, "mkfifo: %s", strerror(errno));
	if (kind == K_TTY) {
		CHECK(openpty(&master, &slave, g_pts, NULL, NULL) == 0, "openpty: %s",
		      strerror(errno));
		close(slave);
	}
	v = victim_run(v_waiter);
	recv_msg(&v);
	recv_msg(&v);
	/* Asleep in its wait. */
	for (int i = 0; i < 2000 && proc_state(v.pid) != 'S'; i++)
		usleep(1000);
	usleep(20000);
	if (kind == K_FIFO)
		snprintf(path, sizeof(path), "%s", tpath);
	else if (kind == K_TTY)
		snprintf(path, sizeof(path), "%s", g_pts);
	else
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, HOLD_FD);
	CHECK(revoke_explained(path) == 0, "%s/%s: revoke %s: %s", kind_name[kind], how_name[how],
	      path, strerror(errno));
	m = recv_msg(&v);
	if (how == W_EPOLL) {
		CHECK(m.v[0] == 1 && (m.v[2] & (EPOLLHUP | EPOLLERR)) &&
			  (uint64_t)m.v[3] == EPOLL_TAG,
		      "%s/%s: woke with %lld (%s), events %#llx, data %#llx", kind_name[kind],
		      how_name[how], (long long)m.v[0], strerror((int)m.v[1]),
		      (unsigned long long)m.v[2], (unsigned long long)m.v[3]);
	} else if (how == W_POLL) {
		CHECK(m.v[0] == 1 && (m.v[2] & (POLLNVAL | POLLHUP | POLLERR)),
		      "%s/%s: woke with %lld (%s), revents %#llx", kind_name[kind], how_name[how],
		      (long long)m.v[0], strerror((int)m.v[1]), (unsigned long long)m.v[2]);
	} else {
		CHECK(m.v[0] == 1 || (m.v[0] == -1 && m.v[1] == EBADF),
		      "%s/%s: woke with %lld (%s)", kind_name[kind], how_name[how],
		      (long long)m.v[0], strerror((int)m.v[1]));
	}
	CHECK(m.v[4] == -1 && m.v[5] == EBADF, "%s/%s: read after waking gave %lld (%s)",
	      kind_name[kind], how_name[how], (long long)m.v[4], strerror((int)m.v[5]));
	if (master >= 0)
		close(master);
}

static const struct wait_row {
	struct test_row t;
	int kind, how;
} waits[] = {
    {{"socket_epoll", 30}, K_SOCKET, W_EPOLL},	 {{"socket_poll", 30}, K_SOCKET, W_POLL},
    {{"socket_select", 30}, K_SOCKET, W_SELECT}, {{"fifo_epoll", 30}, K_FIFO, W_EPOLL},
    {{"fifo_poll", 30}, K_FIFO, W_POLL},	 {{"fifo_select", 30}, K_FIFO, W_SELECT},
    {{"pipe_epoll", 30}, K_PIPE, W_EPOLL},	 {{"pipe_poll", 30}, K_PIPE, W_POLL},
    {{"pipe_select", 30}, K_PIPE, W_SELECT},	 {{"tty_epoll", 30}, K_TTY, W_EPOLL},
    {{"tty_poll", 30}, K_TTY, W_POLL},		 {{"tty_select", 30}, K_TTY, W_SELECT},
};

static void wait_case(const void *row)
{
	const struct wait_row *w = row;

	check(w->kind, w->how);
}

TEST_MAIN("revoke-eventloop", TEST_TABLE(waits, wait_case))
