/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc scanner over the whole system: list the pids, spread them over
 * worker threads (one per online CPU, at most 8) that read each process
 * (proc_one.c), turn every process that holds a target into a holder (pidfd,
 * status), merge and sort.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "discover/proc.h"
#include "kinds/target.h"

#define MAX_WORKERS   8
#define PIDS_PER_GRAB 8
/* A process whose descriptors or mappings we may not read (another user's,
 * a non-dumpable one): it may hold a target, so it is listed as such. */
static int add_uninspected(struct scan_worker *w, pid_t pid, const struct rv_proc_stat *st)
{
	struct rv_proc_status status = {0};
	struct rv_holder *h;
	char name[32];
	int r;

	snprintf(name, sizeof(name), "%d/status", pid);
	r = (int)rv_proc_read_record_at(w, w->ctx->proc_fd, name);
	if (r < 0 || rv_parse_status(w->buf, &status) < 0)
		return r < 0 && !rv_gone_errno(-r) && !rv_hidden_errno(-r) ? r : 0;
	h = rv_holders_add(&w->hs, pid);
	if (!h)
		return -ENOMEM;
	rv_proc_take_refs(w, h);
	h->uninspected = true;
	h->pub.uid = status.ruid;
	snprintf(h->pub.comm, sizeof(h->pub.comm), "%s", st->comm);
	snprintf(h->pub.reason, sizeof(h->pub.reason),
		 "cannot inspect its descriptors: not permitted");
	h->state = status.state;
	h->nspid = status.nspid_inner;
	return 0;
}

/* Scans PID; when it holds a target, appends it to w->hs with its pidfd. */
static int scan_new(struct scan_worker *w, pid_t pid)
{
	_cleanup_close_ int pidfd = -1;
	struct rv_proc_status status;
	struct rv_proc_stat st;
	struct rv_holder *h;
	char name[32];
	int r;

	r = rv_proc_scan_one(w, pid, &pidfd, &st);
	if (r < 0)
		return r == -ESRCH ? 0 : r;
	if (w->hidden)
		return add_uninspected(w, pid, &st);
	if (w->tmp.pub.nrefs == 0)
		return 0;
	r = rv_holder_pidfd(pid, &pidfd, &w->ctx->pidfd_max);
	if (r < 0)
		return rv_gone_errno(-r) ? 0 : r;
	if (!rv_proc_recheck(w, pid)) {
		/* With the pidfd held the pid cannot change owner while the
		 * process lives: scan again and make sure it still does. */
		r = rv_proc_scan_one(w, pid, &pidfd, &st);
		if (r < 0 || w->tmp.pub.nrefs == 0)
			return r == -ESRCH ? 0 : r;
		if (pidfd >= 0 && rv_pidfd_alive(pidfd) < 0)
			return 0;
	}
	snprintf(name, sizeof(name), "%d/status", pid);
	r = (int)rv_proc_read_record_at(w, w->ctx->proc_fd, name);
	if (r < 0 || rv_parse_status(w->buf, &status) < 0)
		return r < 0 && !rv_gone_errno(-r) && !rv_hidden_errno(-r) ? r : 0;

	h = rv_holders_add(&w->hs, pid);
	if (!h)
		return -ENOMEM;
	rv_proc_take_refs(w, h);
	h->pub.uid = status.ruid;
	snprintf(h->pub.comm, sizeof(h->pub.comm), "%s", st.comm);
	h->pidfd = TAKE_FD(pidfd);
	h->self = pid == w->ctx->self;
	h->seccomp = status.seccomp;
	h->tracer = status.tracer;
	h->state = status.state;
	h->nspid = status.nspid_inner;
	h->pf_flags = st.flags;
	h->have_pf_flags = true;
	return 0;
}

static bool deadline_passed(const struct scan_ctx *ctx)
{
	return ctx->opts && ctx->opts->deadline_ns && rv_now_ns() > ctx->opts->deadline_ns;
}

static void set_error(struct scan_ctx *ctx, int r)
{
	int zero = 0;

	atomic_compare_exchange_strong(&ctx->error, &zero, r);
}

static void *worker_run(void *arg)
{
	struct scan_worker *w = arg;
	struct scan_ctx *ctx = w->ctx;

	while (!atomic_load_explicit(&ctx->error, memory_order_relaxed)) {
		size_t i = atomic_fetch_add(&ctx->next, PIDS_PER_GRAB);

		if (i >= ctx->npids)
			break;
		for (size_t j = i; j < i + PIDS_PER_GRAB && j < ctx->npids; j++) {
			int r;

			if (deadline_passed(ctx)) {
				set_error(ctx, -ETIMEDOUT);
				return NULL;
			}
			/* The caller was scanned first, alone: see rv_scan_proc. */
			if (ctx->pids[j] == ctx->self)
				continue;
			r = scan_new(w, ctx->pids[j]);
			if (r < 0) {
				set_error(ctx, r);
				return NULL;
			}
		}
	}
	return NULL;
}

static int list_pids(struct scan_ctx *ctx, char *dents, size_t size)
{
	size_t cap = 1024;

	ctx->pids = malloc(cap * sizeof(pid_t));
	if (!ctx->pids)
		return -ENOMEM;
	for (;;) {
		long n = syscall(SYS_getdents64, ctx->proc_fd, dents, size);

		if (n < 0)
			return negative_errno();
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(void *)(dents + off);
			int pid;

			off += d->d_reclen;
			if (rv_parse_int(d->d_name, &pid) < 0 || pid <= 0)
				continue;
			if (ctx->npids == cap) {
				pid_t *p = realloc(ctx->pids, 2 * cap * sizeof(pid_t));
				if (!p)
					return -ENOMEM;
				ctx->pids = p;
				cap *= 2;
			}
			ctx->pids[ctx->npids++] = pid;
		}
	}
}

/* Moves every worker's holders to RET; on failure RET is as it was. */
static int merge(struct scan_worker *ws, size_t nw, struct rv_holders *ret)
{
	for (size_t i = 0; i < nw; i++) {
		int r = rv_holders_merge(ret, &ws[i].hs);

		if (r < 0)
			return r;
	}
	rv_holders_sort(ret);
	return 0;
}

int rv_scan_proc(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		 struct rv_holders *ret)
{
	struct scan_worker *ws = NULL;
	struct scan_ctx ctx;
	size_t nw = 0, nalloc = 0, started = 0;
	long ncpu;
	int r;

	r = rv_proc_ctx_init(&ctx, targets, ntargets, opts);
	if (r < 0)
		goto out;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	nw = ncpu < 1 ? 1 : ncpu > MAX_WORKERS ? MAX_WORKERS : (size_t)ncpu;
	ws = calloc(nw, sizeof(*ws));
	if (!ws) {
		r = -ENOMEM;
		goto out;
	}
	nalloc = nw;
	for (size_t i = 0; i < nw; i++) {
		r = rv_proc_worker_init(&ws[i], &ctx);
		if (r < 0)
			goto out;
	}
	r = list_pids(&ctx, ws[0].dents, sizeof(ws[0].dents));
	if (r < 0)
		goto out;
	if (nw > ctx.npids / 16 + 1)
		nw = ctx.npids / 16 + 1;

	/* The caller first, with no worker running: peeking at in-flight fds
	 * and pidfd_getfd put transient descriptors into this very fd table,
	 * which a concurrent scan of it would report as held. */
	if (deadline_passed(&ctx)) {
		r = -ETIMEDOUT;
		goto out;
	}
	r = scan_new(&ws[0], ctx.self);
	if (r < 0)
		goto out;

	for (size_t i = 1; i < nw; i++) {
		r = -pthread_create(&ws[i].thread, NULL, worker_run, &ws[i]);
		if (r < 0) {
			set_error(&ctx, r);
			break;
		}
		started = i;
	}
	worker_run(&ws[0]);
	for (size_t i = 1; i <= started; i++)
		pthread_join(ws[i].thread, NULL);
	r = atomic_load(&ctx.error);
	if (r < 0)
		goto out;
	r = merge(ws, started + 1, ret);
out:
	for (size_t i = 0; i < nalloc; i++)
		rv_proc_worker_done(&ws[i]);
	free(ws);
	rv_proc_ctx_done(&ctx);
	return r < 0 ? r : 0;
}
