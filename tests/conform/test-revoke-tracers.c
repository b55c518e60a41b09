/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance: tracer threads (REVOKE_TRACERS). With several threads each
 * owning a shard of the holders from seize to release, the outcome is the
 * one thread's: every holder cut in every thread and let go untraced; a
 * refusal in one shard leaves the holders of every other shard untouched.
 * Every call asks for the userspace engine (the native one stops nobody).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

#define NHOLDERS 6

static void set_tracers(int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", n);
	CHECK(setenv("REVOKE_TRACERS", v, 1) == 0, "setenv: %m");
}

static int revoke_userspace(struct revoke_report **rep)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {
	    .sz = sizeof(o), .flags = REVOKE_ENGINE_USERSPACE, .timeout_ms = 0, .keep_fd = -1};

	return revoke_ex(paths, 1, &o, rep);
}

/* A holder of the target with a second thread: its descriptor's number. */
static int threaded_holder(struct victim *v, struct victim *t)
{
	int fd;

	victim_start(v);
	fd = victim_open(v, tpath, O_RDWR);
	victim_spawn(v, VOP_THREAD, t);
	return fd;
}

static void check_not_held(pid_t pid)
{
	char s = proc_state(pid);

	CHECK(s != 't' && s != 'T', "holder %d left stopped (state %c)", (int)pid, s);
	CHECK(proc_status_field(pid, "TracerPid") == 0, "holder %d left traced by %ld", (int)pid,
	      proc_status_field(pid, "TracerPid"));
}

/* NHOLDERS holders of two threads each, NTRACERS tracer threads: every
 * holder cut in both threads, none left traced or stopped. */
static void holders_cut(int ntracers)
{
	struct victim v[NHOLDERS], t[NHOLDERS];
	int fd[NHOLDERS];
	struct revoke_report *rep = NULL;
	int r;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	for (int i = 0; i < NHOLDERS; i++)
		fd[i] = threaded_holder(&v[i], &t[i]);
	set_tracers(ntracers);
	r = revoke_userspace(&rep);
	CHECK(r == 0, "revoke_ex = %d (%s)", r, strerror(errno));
	CHECK(rep && rep->nholders == NHOLDERS, "%zu holders reported, want %d",
	      rep ? rep->nholders : 0, NHOLDERS);
	for (int i = 0; i < NHOLDERS; i++) {
		const struct revoke_holder *h = find_holder(rep, v[i].pid);
		struct victim_res a, b;

		CHECK(h && h->state == REVOKE_STATE_CUT, "holder %d not reported cut",
		      (int)v[i].pid);
		check_not_held(v[i].pid);
		a = victim_read(&v[i], fd[i], 1);
		b = victim_read(&t[i], fd[i], 1);
		CHECK(b.tid != v[i].pid, "the read ran in the main thread");
		CHECK(a.ret == -1 && a.err == EBADF, "holder %d: read gave %ld (%s)", (int)v[i].pid,
		      a.ret, strerror(a.err));
		CHECK(b.ret == -1 && b.err == EBADF, "holder %d's thread: read gave %ld (%s)",
		      (int)v[i].pid, b.ret, strerror(b.err));
	}
	revoke_report_free(rep);
}

static const struct tracers_row {
	struct test_row t;
	int ntracers;
} tracer_rows[] = {
    {{"holders_cut_1_tracer", 30}, 1},
    {{"holders_cut_2_tracers", 30}, 2},
    {{"holders_cut_3_tracers", 30}, 3},
};

static void tracers_case(const void *row)
{
	holders_cut(((const struct tracers_row *)row)->ntracers);
}

/* ---- a refusal in the second shard ---- */

static pid_t g_trace_tid;

static void v_tracer(int sock)
{
	long r = ptrace(PTRACE_SEIZE, g_trace_tid, 0, 0);

	send_msg(sock, MSG(r, r < 0 ? errno : 0));
	msg_wait(sock);
}

/*
 * Four holders, two tracer threads: shards are dealt in the holders' order
 * (pids rising), so the last one is the second thread's. Its second thread is
 * traced by someone else, which only its own seize finds (its leader is not
 * traced): refused there, while the first thread stops its shard. Every
 * holder must come out untouched: not cut, not stopped, not traced, reading.
 */
static void t_refusal_in_second_shard(void)
{
	struct victim v[4], t[4], tracer;
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	int fd[4], r, e;
	struct msg m;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	for (int i = 0; i < 4; i++)
		fd[i] = threaded_holder(&v[i], &t[i]);
	g_trace_tid = victim_call(&t[3], VICTIM_REQ(.op = VOP_PING)).tid;
	CHECK(g_trace_tid > 0 && g_trace_tid != v[3].pid, "no second thread (%d)",
	      (int)g_trace_tid);
	tracer = victim_run(v_tracer);
	m = recv_msg(&tracer);
	CHECK(m.v[0] == 0, "PTRACE_SEIZE of thread %d: %s", (int)g_trace_tid,
	      strerror((int)m.v[1]));
	set_tracers(2);
	r = revoke_userspace(&rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	CHECK(rep, "no report on EBUSY");
	h = find_holder(rep, v[3].pid);
	CHECK(h && h->error == EPERM && strstr(h->reason, "traced"),
	      "the traced holder: error %d, reason \"%s\"", h ? h->error : -1, h ? h->reason : "");
	for (int i = 0; i < 4; i++) {
		struct victim_res a, b;

		h = find_holder(rep, v[i].pid);
		CHECK(h, "holder %d missing from the report", (int)v[i].pid);
		for (size_t j = 0; j < h->nrefs; j++)
			CHECK(h->refs[j].state != REVOKE_STATE_CUT,
			      "holder %d ref %zu reported cut", (int)v[i].pid, j);
		CHECK(proc_state(v[i].pid) != 't' && proc_state(v[i].pid) != 'T',
		      "holder %d left stopped", (int)v[i].pid);
		CHECK(proc_status_field(v[i].pid, "TracerPid") == 0, "holder %d left traced",
		      (int)v[i].pid);
		/* One byte each: the two threads share the file's offset. */
		a = victim_read(&v[i], fd[i], 1);
		b = victim_read(&t[i], fd[i], 1);
		CHECK(a.ret == 1 && b.ret == 1, "holder %d: reads gave %ld and %ld (%s)",
		      (int)v[i].pid, a.ret, b.ret, strerror(a.err ? a.err : b.err));
	}
	revoke_report_free(rep);
}

/* ---- the shards seen from outside, while the call waits ---- */

static int g_fd;

static void *vfork_thread(void *arg)
{
	(void)arg;
	/* The child drops its copy of the target: it is no holder itself. */
	test_vfork((const struct test_vf_step[]){VF_CLOSE(g_fd), VF_SLEEP(10), VF_EXIT(0)});
	return NULL;
}

/* A holder one of whose threads (not its leader) waits in vfork(): that
 * thread cannot be stopped (uninterruptible), so its tracer waits for it
 * until the stop's deadline while everyone else stays stopped. */
static void v_vfork_thread_holder(int sock)
{
	pthread_t t;

	g_fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (g_fd < 0 || pthread_create(&t, NULL, vfork_thread, NULL) != 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), g_fd));
	holder_loop(sock, g_fd);
}

static bool some_thread_in_d(pid_t pid)
{
	pid_t tids[16];
	int n = proc_tasks(pid, tids, 16);

	for (int i = 0; i < n; i++)
		if (tids[i] != pid && task_state(pid, tids[i]) == 'D')
			return true;
	return false;
}

static struct victim g_plain[3];
static atomic_bool g_done;
static pid_t g_seen[8];
static atomic_int g_nseen;

/* While the call runs: every tracer seen on the plain holders, if it is a
 * thread of ours at that moment. */
static void *watch(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_done)) {
		for (int i = 0; i < 3; i++) {
			pid_t tp = (pid_t)proc_status_field(g_plain[i].pid, "TracerPid"), ours[64];
			int n = tp > 0 ? proc_tasks(getpid(), ours, 64) : 0;
			bool known = false, mine = false;

			for (int k = 0; k < atomic_load(&g_nseen); k++)
				known |= g_seen[k] == tp;
			for (int k = 0; k < n; k++)
				mine |= ours[k] == tp;
			if (mine && !known && atomic_load(&g_nseen) < 8)
				g_seen[atomic_fetch_add(&g_nseen, 1)] = tp;
		}
		msleep(1);
	}
	return NULL;
}

/*
 * Four holders, two tracer threads: the last one's non-leader thread waits
 * in vfork(), so its shard (the second) waits for it until the stop's
 * deadline and refuses; meanwhile the other three are stopped by two
 * threads of ours (TracerPid names the thread), and afterwards every holder
 * is untouched. The watch needs no timing: the wait lasts until the stop's
 * deadline, a large part of a 4 s call.
 */
static void t_refusal_by_timeout_in_second_shard(void)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {
	    .sz = sizeof(o), .flags = REVOKE_ENGINE_USERSPACE, .timeout_ms = 4000, .keep_fd = -1};
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim last;
	pthread_t w;
	int r, e, i;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	for (i = 0; i < 3; i++) {
		g_plain[i] = victim_run(holder_main);
		recv_msg(&g_plain[i]);
	}
	last = victim_run(v_vfork_thread_holder);
	recv_msg(&last);
	for (i = 0; i < 500 && !some_thread_in_d(last.pid); i++)
		msleep(10);
	CHECK(some_thread_in_d(last.pid), "no thread of %d waits in vfork()", (int)last.pid);
	set_tracers(2);
	CHECK(pthread_create(&w, NULL, watch, NULL) == 0, "pthread_create");
	r = revoke_ex(paths, 1, &o, &rep);
	e = errno;
	atomic_store(&g_done, true);
	pthread_join(w, NULL);
	CHECK(r == -1 && (e == EBUSY || e == ETIMEDOUT), "revoke_ex returned %d (%s)", r,
	      strerror(e));
	CHECK(atomic_load(&g_nseen) == 2, "%d tracer threads seen on the holders, want 2",
	      atomic_load(&g_nseen));
	h = rep ? find_holder(rep, last.pid) : NULL;
	CHECK(h && h->error == ETIMEDOUT, "the vfork holder: error %d (%s)", h ? h->error : -1,
	      h ? h->reason : "");
	for (i = 0; i < 3; i++) {
		check_not_held(g_plain[i].pid);
		CHECK_READS(&g_plain[i]);
	}
	check_not_held(last.pid);
	CHECK_READS(&last);
	revoke_report_free(rep);
}

TEST_MAIN("revoke-tracers", TEST_TABLE(tracer_rows, tracers_case),
	  {"refusal_in_second_shard", t_refusal_in_second_shard, 30},
	  {"refusal_by_timeout_in_second_shard", t_refusal_by_timeout_in_second_shard, 60}, )
