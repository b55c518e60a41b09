/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Completing epoll waits on cut descriptors (wake.h). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "arch/arch.h"
#include "kinds/target.h"
#include "cut/wake.h"
#include "kinds/refkind.h"

#define MAX_EVENTS 64

struct waiter {
	pid_t tid;
	uint64_t events_addr; /* its struct epoll_event array */
	long have;	      /* events it already collected (>= 0) */
	size_t n;
	struct epoll_event ev[MAX_EVENTS];
};

struct rv_wake {
	size_t n, cap;
	struct waiter *w;
};

void rv_wake_free(struct rv_wake *w)
{
	if (!w)
		return;
	free(w->w);
	free(w);
}

static bool is_epoll_wait(long nr)
{
	return nr == SYS_epoll_pwait
#ifdef SYS_epoll_wait /* not in the generic table (aarch64) */
	       || nr == SYS_epoll_wait
#endif
#ifdef SYS_epoll_pwait2
	       || nr == SYS_epoll_pwait2
#endif
	    ;
}

/* Whether descriptor TFD of H (an FD ref about to be cut) is registration IT. */
static bool is_cut_registration(const struct rv_holder *h, const struct rv_target *targets,
				size_t ntargets, const struct rv_epoll_item *it)
{
	for (size_t i = 0; i < h->pub.nrefs; i++) {
		const struct revoke_ref *ref = &h->pub.refs[i];
		if (!rv_refkind_of(ref)->in_table || ref->fd != it->tfd ||
		    ref->state != REVOKE_STATE_FOUND || ref->target >= ntargets)
			continue;
		if (rv_target_match_kdev(&targets[ref->target], it->sdev, it->ino))
			return true;
	}
	return false;
}

static int read_fdinfo(pid_t pid, pid_t tid, int fd, char *buf, size_t size)
{
	_cleanup_close_ int f = -1;
	size_t len = 0;

	f = rv_proc_open(pid, tid, O_RDONLY, "fdinfo/%d", fd);
	if (f < 0)
		return negative_errno();
	while (len < size - 1) {
		ssize_t n = read(f, buf + len, size - 1 - len);

		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return 0;
}

int rv_wake_collect(struct rv_holder *h, const struct rv_target *targets, size_t ntargets,
		    struct rv_wake **ret)
{
	struct rv_wake *w = NULL;
	_cleanup_free_ char *buf = NULL;
	bool any_fd = false;

	*ret = NULL;
	for (size_t i = 0; i < h->pub.nrefs && !any_fd; i++)
		any_fd = rv_refkind_of(&h->pub.refs[i])->in_table &&
			 h->pub.refs[i].state == REVOKE_STATE_FOUND;
	if (!any_fd || !h->tracee)
		return 0;
	for (size_t i = 0;; i++) {
		struct rv_regs regs;
		struct waiter *wt;
		const char *cursor = NULL;
		struct rv_epoll_item it;
		pid_t tid;
		long nr, have, epfd;
		int r = rv_tracee_thread_regs(h->tracee, i, &tid, &regs);

		if (r == -ENOENT)
			break;
		if (r < 0)
			continue;
		nr = rv_arch_syscall_nr(&regs);
		if (!is_epoll_wait(nr))
			continue;
		/* Interrupted by our stop (EINTR), or returning what it had. */
		have = rv_arch_syscall_result(&regs);
		if (have == -EINTR)
			have = 0;
		if (have < 0 || have >= rv_arch_syscall_arg(&regs, 2))
			continue;
		if (!buf) {
			buf = malloc(65536);
			if (!buf)
				goto nomem;
		}
		epfd = rv_arch_syscall_arg(&regs, 0);
		if (epfd < 0)
			epfd = rv_tracee_lost_arg0(h->tracee, tid, &regs);
		if (epfd < 0 || epfd > INT_MAX ||
		    read_fdinfo(h->pub.pid, tid, (int)epfd, buf, 65536) < 0)
			continue;
		wt = NULL;
		while (rv_fdinfo_next_epoll_item(buf, &cursor, &it) != 1) {
			if (!is_cut_registration(h, targets, ntargets, &it))
				continue;
			if (!wt) {
				if (!w) {
					w = calloc(1, sizeof(*w));
					if (!w)
						goto nomem;
				}
				if (w->n == w->cap) {
					size_t cap = w->cap ? 2 * w->cap : 4;
					struct waiter *v = realloc(w->w, cap * sizeof(*v));

					if (!v)
						goto nomem;
					w->w = v;
					w->cap = cap;
				}
				wt = &w->w[w->n++];
				*wt = (struct waiter){.tid = tid,
						      .events_addr =
							  (uint64_t)rv_arch_syscall_arg(&regs, 1),
						      .have = have};
			}
			if (wt->n < MAX_EVENTS &&
			    (long)wt->n + have < rv_arch_syscall_arg(&regs, 2)) {
				/* What a hung-up file reports, whatever was asked for:
				 * EPOLLHUP and EPOLLERR always are. */
				wt->ev[wt->n].events =
				    EPOLLHUP | EPOLLERR |
				    (it.events &
				     (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLRDNORM | EPOLLWRNORM));
				wt->ev[wt->n].data.u64 = it.data;
				wt->n++;
			}
		}
	}
	*ret = w;
	return 0;
nomem:
	rv_wake_free(w);
	return -ENOMEM;
}

void rv_wake_apply(struct rv_holder *h, struct rv_wake *w)
{
	if (!w)
		return;
	for (size_t i = 0; h->tracee && i < w->n; i++) {
		struct waiter *wt = &w->w[i];

		if (wt->n == 0)
			continue;
		(void)rv_tracee_complete_syscall(h->tracee, wt->tid, wt->have + (long)wt->n,
						 wt->events_addr + (uint64_t)wt->have *
								       sizeof(struct epoll_event),
						 wt->ev, wt->n * sizeof(struct epoll_event));
	}
	rv_wake_free(w);
}
