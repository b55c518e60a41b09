/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, part 2: all or nothing. When one holder cannot be stopped
 * (already traced, or stuck in an uninterruptible wait) revoke fails with
 * EBUSY and nobody is touched: every other holder still reads and is neither
 * stopped nor traced afterwards. With REVOKE_BEST_EFFORT the stoppable
 * holders are cut and the report says which ones were and which not.
 * Holders that cannot be stopped exist only for the userspace (ptrace)
 * engine, so every call here asks for it (the native syscalls stop nobody).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <seccomp.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * Whether victim V is (back) in its job-control stop: state T within 1 s (a
 * detach wakes a group-stopped task, which re-enters the stop before it runs
 * any user code), and MSG sent to it stays unanswered for 300 ms. The caller
 * sends SIGCONT afterwards and then receives the answer.
 */
static inline bool stays_stopped(const struct victim *v, struct msg msg, char *ret_state)
{
	struct msg m;
	int i;

	for (i = 0; i < 100 && proc_state(v->pid) != 'T'; i++)
		msleep(10);
	*ret_state = proc_state(v->pid);
	if (*ret_state != 'T')
		return false;
	send_msg(v->sock, msg);
	if (recv_msg_timeout(v->sock, &m, 300) != -ETIMEDOUT) {
		*ret_state = '!';
		return false;
	}
	*ret_state = proc_state(v->pid);
	return *ret_state == 'T';
}

/* ---- a tracer of our own: a child that PTRACE_SEIZEs a victim and waits ---- */

static pid_t g_trace_pid;

static void v_tracer(int sock)
{
	long r = ptrace(PTRACE_SEIZE, g_trace_pid, 0, 0);

	send_msg(sock, MSG(r, r < 0 ? errno : 0));
	msg_wait(sock);
}

static struct victim trace(pid_t pid)
{
	struct victim t;
	struct msg m;

	g_trace_pid = pid;
	t = victim_run(v_tracer);
	m = recv_msg(&t);
	CHECK(m.v[0] == 0, "PTRACE_SEIZE of victim %d: %s", (int)pid, strerror((int)m.v[1]));
	CHECK(proc_status_field(pid, "TracerPid") == t.pid, "victim %d not traced by %d", (int)pid,
	      (int)t.pid);
	return t;
}

/* ---- a holder that cannot be stopped: a vfork parent whose child sleeps ---- */

static void v_vfork_parent(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	/* The child drops its copy of the target so that it is no holder itself. */
	test_vfork((const struct test_vf_step[]){VF_CLOSE(fd), VF_SLEEP(20), VF_EXIT(0)});
	msg_wait(sock);
}

static struct victim spawn_vfork_parent(int *ret_fd)
{
	struct victim v = victim_run(v_vfork_parent);
	int i;

	*ret_fd = (int)recv_msg(&v).v[1];
	for (i = 0; i < 500 && proc_state(v.pid) != 'D'; i++)
		msleep(10);
	CHECK(proc_state(v.pid) == 'D',
	      "vfork parent %d not in its uninterruptible wait (state %c)", (int)v.pid,
	      proc_state(v.pid));
	return v;
}

/* Every holder of the report that is not PID: refs not cut. */
static void check_holder_untouched(const struct revoke_report *rep, const struct victim *v)
{
	const struct revoke_holder *h = find_holder(rep, v->pid);
	char s;

	CHECK(h, "holder %d missing from the report", (int)v->pid);
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state != REVOKE_STATE_CUT, "holder %d ref %zu reported cut",
		      (int)v->pid, i);
	s = proc_state(v->pid);
	CHECK(s != 't' && s != 'T', "holder %d left stopped (state %c)", (int)v->pid, s);
	CHECK(proc_status_field(v->pid, "TracerPid") == 0, "holder %d left traced by %ld",
	      (int)v->pid, proc_status_field(v->pid, "TracerPid"));
	CHECK_READS(v);
}

static int revoke_with(unsigned int flags, int timeout_ms, struct revoke_report **rep)
{
	const char *paths[] = {tpath};
	struct revoke_opts o = {.sz = sizeof(o),
				.flags = flags | REVOKE_ENGINE_USERSPACE,
				.timeout_ms = timeout_ms,
				.keep_fd = -1};

	return revoke_ex(paths, 1, &o, rep);
}

static void check_holder_cut(const struct revoke_report *rep, const struct victim *v)
{
	const struct revoke_holder *h = find_holder(rep, v->pid);

	CHECK(h, "holder %d missing from the report", (int)v->pid);
	CHECK(h->state == REVOKE_STATE_CUT,
	      "holder %d state %s, not cut (error %d \"%s\", ref error %d)", (int)v->pid,
	      revoke_state_name(h->state), h->error, h->reason, h->nrefs ? h->refs[0].error : 0);
	CHECK(h->nrefs >= 1, "holder %d has no refs", (int)v->pid);
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state == REVOKE_STATE_CUT, "holder %d ref %zu state %s",
		      (int)v->pid, i, revoke_state_name(h->refs[i].state));
	CHECK(proc_status_field(v->pid, "TracerPid") == 0, "holder %d left traced", (int)v->pid);
	CHECK_CUT(v);
}

static void t_traced_holder_ebusy(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim a, b;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	a = victim_run(holder_main);
	recv_msg(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	trace(a.pid);
	r = revoke_with(0, 0, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	CHECK(rep, "no report on EBUSY");
	CHECK(rep->error == EBUSY, "report error %d", rep->error);
	h = find_holder(rep, a.pid);
	CHECK(h, "traced holder %d missing from the report", (int)a.pid);
	CHECK(h->error == EPERM, "traced holder error %d (%s), expected EPERM", h->error,
	      strerror(h->error));
	CHECK(strstr(h->reason, "traced"), "reason \"%s\" does not mention \"traced\"", h->reason);
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state != REVOKE_STATE_CUT, "traced holder's ref %zu reported cut",
		      i);
	h = find_holder(rep, b.pid);
	CHECK(h, "second holder %d missing from the report", (int)b.pid);
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state == REVOKE_STATE_SKIPPED,
		      "second holder's ref %zu state %s, not skipped", i,
		      revoke_state_name(h->refs[i].state));
	check_holder_untouched(rep, &b);
	CHECK_READS(&a);
	revoke_report_free(rep);
}

static void t_traced_holder_best_effort(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim a, b;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	a = victim_run(holder_main);
	recv_msg(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	trace(a.pid);
	r = revoke_with(REVOKE_BEST_EFFORT, 0, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	CHECK(rep, "no report on EBUSY");
	h = find_holder(rep, a.pid);
	CHECK(h, "traced holder %d missing from the report", (int)a.pid);
	CHECK(h->error == EPERM, "traced holder error %d (%s), expected EPERM", h->error,
	      strerror(h->error));
	CHECK(h->state != REVOKE_STATE_CUT, "traced holder reported cut");
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state != REVOKE_STATE_CUT, "traced holder's ref %zu reported cut",
		      i);
	CHECK_READS(&a);
	check_holder_cut(rep, &b);
	CHECK(proc_state(b.pid) != 't', "cut holder left stopped");
	revoke_report_free(rep);
}

static void t_vfork_holder_ebusy(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim v, b;
	struct stat st;
	uint64_t t0, dt;
	int r, e, fd;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	b = victim_run(holder_main);
	recv_msg(&b);
	v = spawn_vfork_parent(&fd);
	t0 = now_ns();
	r = revoke_with(0, 2000, &rep);
	e = errno;
	dt = now_ns() - t0;
	CHECK(dt < 10000000000ull, "revoke_ex with timeout_ms=2000 took %llu ms",
	      (unsigned long long)(dt / 1000000));
	CHECK(rep, "no report on EBUSY");
	h = find_holder(rep, v.pid);
	CHECK(h, "vfork parent %d missing from the report", (int)v.pid);
	CHECK(h->error == ETIMEDOUT, "vfork parent's error %d (%s), expected ETIMEDOUT", h->error,
	      strerror(h->error));
	for (size_t i = 0; i < h->nrefs; i++)
		CHECK(h->refs[i].state != REVOKE_STATE_CUT, "vfork parent's ref %zu reported cut",
		      i);
	CHECK(proc_fd_is(v.pid, fd, &st), "vfork parent's fd %d no longer refers to the target",
	      fd);
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "vfork parent left traced");
	check_holder_untouched(rep, &b);
	/* Last, so that a wrong errno does not hide the rest. */
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	revoke_report_free(rep);
}

static void t_vfork_holder_best_effort(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim v, b;
	struct stat st;
	uint64_t t0, dt;
	int r, e, fd;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	b = victim_run(holder_main);
	recv_msg(&b);
	v = spawn_vfork_parent(&fd);
	t0 = now_ns();
	r = revoke_with(REVOKE_BEST_EFFORT, 2000, &rep);
	e = errno;
	dt = now_ns() - t0;
	CHECK(dt < 10000000000ull, "revoke_ex with timeout_ms=2000 took %llu ms",
	      (unsigned long long)(dt / 1000000));
	CHECK(rep, "no report on EBUSY");
	h = find_holder(rep, v.pid);
	CHECK(h, "vfork parent %d missing from the report", (int)v.pid);
	CHECK(h->error == ETIMEDOUT, "vfork parent's error %d (%s), expected ETIMEDOUT", h->error,
	      strerror(h->error));
	CHECK(h->state != REVOKE_STATE_CUT, "vfork parent reported cut");
	CHECK(proc_fd_is(v.pid, fd, &st), "vfork parent's fd %d no longer refers to the target",
	      fd);
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "vfork parent left traced");
	check_holder_cut(rep, &b);
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	revoke_report_free(rep);
}

/* Plain revoke() (default timeout) with an unstoppable holder: fails, does not hang. */
static void t_vfork_holder_plain_revoke(void)
{
	struct victim v, b;
	struct stat st;
	int r, e, fd;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	b = victim_run(holder_main);
	recv_msg(&b);
	v = spawn_vfork_parent(&fd);
	setenv("REVOKE_ENGINE", "ptrace", 1); /* this process only: the case's own child */
	/* The real default (5 s), not the suite's longer one: the vfork child
	 * sleeps 20 s, and the call must end while it still does. */
	setenv("REVOKE_TIMEOUT", "5", 1);
	r = revoke(tpath);
	e = errno;
	CHECK(proc_fd_is(v.pid, fd, &st), "vfork parent's fd %d no longer refers to the target",
	      fd);
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "vfork parent left traced");
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "second holder left traced");
	CHECK_READS(&b);
	CHECK(r == -1 && e == EBUSY, "revoke returned %d (%s), expected EBUSY", r, strerror(e));
}

/* ---- an unprivileged caller and a holder under seccomp ---- */

static bool g_seccomp;
static pid_t g_holders[2];
static unsigned int g_caller_flags;
static bool g_caller_filtered;

/* A holder of uid 65534, traceable by a caller of that uid. */
static void v_unpriv_holder(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	if (test_become(65534, 65534, TEST_BECOME_DUMPABLE) < 0)
		_exit(2);
	if (g_seccomp) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(dup3), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(5);
		seccomp_release(ctx);
	}
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

/* Revokes as uid 65534 (no capabilities) and reports what the report said. */
static void v_unpriv_caller(int sock)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *s, *o;
	struct msg reason = {{0}};
	int r, e;

	if (g_caller_filtered) {
		/* root, but under a filter of its own (a systemd unit's
		 * SystemCallFilter=): allow all but acct(2). */
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

		if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(acct), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			_exit(5);
		seccomp_release(ctx);
	} else if (test_become(65534, 65534, 0) < 0)
		_exit(2);
	r = revoke_with(g_caller_flags, 0, &rep);
	e = errno;
	s = find_holder(rep, g_holders[0]);
	o = find_holder(rep, g_holders[1]);
	send_msg(sock,
		 MSG(r, r < 0 ? e : 0, s ? s->error : -1, s ? s->state : -1,
		     o && o->nrefs == 1 ? o->refs[0].state : -1,
		     rep && rep->sz >= offsetof(struct revoke_report, nuninspected) + sizeof(size_t)
			 ? (int64_t)rep->nuninspected
			 : -1));
	if (s)
		memcpy(reason.v, s->reason, sizeof(reason.v) - 1);
	send_msg(sock, reason);
	revoke_report_free(rep);
	msg_wait(sock);
}

static void unprivileged_seccomp_case(unsigned int flags)
{
	struct victim s, o, c;
	struct msg m, reason;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(chown(tpath, 65534, 65534) == 0, "chown: %s", strerror(errno));
	CHECK(chmod(tdir, 0755) == 0, "chmod: %s", strerror(errno));
	g_seccomp = true;
	s = victim_run(v_unpriv_holder);
	recv_msg(&s);
	g_seccomp = false;
	o = victim_run(v_unpriv_holder);
	recv_msg(&o);
	CHECK(proc_status_field(s.pid, "Seccomp") == 2, "holder has no seccomp filter");
	g_holders[0] = s.pid;
	g_holders[1] = o.pid;
	g_caller_flags = flags;
	c = victim_run(v_unpriv_caller);
	m = recv_msg(&c);
	reason = recv_msg(&c);
	((char *)reason.v)[sizeof(reason.v) - 1] = 0;
	/* Without CAP_SYS_ADMIN the filter cannot be suspended: the injected dup3
	 * would kill the holder, so it must not be touched at all. */
	CHECK(proc_state(s.pid) != 'Z' && proc_state(s.pid) != 0, "the seccomp'd holder died");
	/* The caller cannot look at this test's own processes (root's): they
	 * may hold the file, so they are counted, and without best effort the
	 * call is refused before anything is stopped. */
	CHECK(m.v[5] > 0, "no process reported as not inspected (%lld)", (long long)m.v[5]);
	if (flags & REVOKE_BEST_EFFORT)
		CHECK(m.v[2] == EPERM,
		      "seccomp'd holder error %lld (%s), expected EPERM (reason \"%s\")",
		      (long long)m.v[2], strerror((int)m.v[2]), (char *)reason.v);
	else
		CHECK(m.v[2] == 0 && m.v[3] == REVOKE_STATE_SKIPPED,
		      "seccomp'd holder error %lld state %lld, expected untried and skipped",
		      (long long)m.v[2], (long long)m.v[3]);
	CHECK(m.v[3] != REVOKE_STATE_CUT, "seccomp'd holder reported cut");
	if (flags & REVOKE_BEST_EFFORT)
		CHECK(m.v[4] == REVOKE_STATE_CUT, "other holder's ref state %lld, expected cut",
		      (long long)m.v[4]);
	else
		CHECK(m.v[4] == REVOKE_STATE_SKIPPED,
		      "other holder's ref state %lld, expected skipped", (long long)m.v[4]);
	CHECK(proc_status_field(s.pid, "TracerPid") == 0, "seccomp'd holder left traced");
	CHECK(proc_status_field(o.pid, "TracerPid") == 0, "other holder left traced");
	CHECK_READS(&s);
	if (flags & REVOKE_BEST_EFFORT)
		CHECK_CUT(&o);
	else
		CHECK_READS(&o);
	CHECK(m.v[0] == -1 && m.v[1] == EBUSY,
	      "revoke_ex as uid 65534 returned %lld (%s), expected EBUSY", (long long)m.v[0],
	      strerror((int)m.v[1]));
}

/* A revoker under a seccomp filter of its own, root or not: the kernel
 * refuses it PTRACE_O_SUSPEND_SECCOMP, so a holder under a filter is left
 * alone, and the reason names the revoker's filter, not a capability root
 * has. */
static void t_filtered_caller_seccomp_holder(void)
{
	struct victim s, o, c;
	struct msg m, reason;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	CHECK(chmod(tdir, 0755) == 0, "chmod: %s", strerror(errno));
	g_seccomp = true;
	s = victim_run(v_unpriv_holder);
	recv_msg(&s);
	g_seccomp = false;
	o = victim_run(v_unpriv_holder);
	recv_msg(&o);
	g_holders[0] = s.pid;
	g_holders[1] = o.pid;
	g_caller_flags = REVOKE_BEST_EFFORT;
	g_caller_filtered = true;
	c = victim_run(v_unpriv_caller);
	m = recv_msg(&c);
	reason = recv_msg(&c);
	((char *)reason.v)[sizeof(reason.v) - 1] = 0;
	CHECK(proc_state(s.pid) != 'Z' && proc_state(s.pid) != 0, "the seccomp'd holder died");
	CHECK(m.v[2] == EPERM, "seccomp'd holder error %lld (%s), expected EPERM",
	      (long long)m.v[2], strerror((int)m.v[2]));
	CHECK(strstr((char *)reason.v, "which a revoker under one"),
	      "seccomp'd holder's reason \"%s\" does not name the revoker's own filter",
	      (char *)reason.v);
	CHECK(m.v[4] == REVOKE_STATE_CUT, "other holder's ref state %lld, expected cut",
	      (long long)m.v[4]);
	CHECK(proc_status_field(s.pid, "TracerPid") == 0, "seccomp'd holder left traced");
	CHECK_READS(&s);
	CHECK_CUT(&o);
}

/* ---- a failed call leaves a SIGSTOPped holder stopped, and mappings working ---- */

static void t_failure_keeps_stopped_holder_stopped(void)
{
	struct revoke_report *rep = NULL;
	struct victim a, b;
	struct msg m;
	int r, e, i;
	char st;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	a = victim_run(holder_main);
	recv_msg(&a);
	b = victim_run(holder_main);
	recv_msg(&b);
	trace(a.pid);
	CHECK(kill(b.pid, SIGSTOP) == 0, "kill: %s", strerror(errno));
	for (i = 0; i < 500 && proc_state(b.pid) != 'T'; i++)
		msleep(10);
	CHECK(proc_state(b.pid) == 'T', "holder did not stop");
	r = revoke_with(0, 0, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	CHECK(proc_status_field(b.pid, "TracerPid") == 0, "stopped holder left traced");
	CHECK(stays_stopped(&b, MSG(CMD_READ), &st),
	      "stopped holder no longer stopped after the failed revoke (state %c)", st);
	CHECK(kill(b.pid, SIGCONT) == 0, "kill: %s", strerror(errno));
	m = recv_msg(&b);
	CHECK(m.v[0] == 5 && m.v[2] == 'h', "holder read %lld (%s) after the failed revoke",
	      (long long)m.v[0], strerror((int)m.v[1]));
	revoke_report_free(rep);
}

static void v_mapper(int sock)
{
	int fd = open(tpath, O_RDONLY | O_CLOEXEC);
	volatile char *p;

	if (fd < 0)
		_exit(2);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(2);
	close(fd); /* only the mapping is left */
	send_msg(sock, MSG(getpid()));
	for (int i = 0; i < 100; i++) {
		msg_wait(sock);
		send_msg(sock, MSG(p[0], p[1])); /* SIGBUS here if it was cut */
	}
}

static void t_failure_leaves_mappings(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim a, m;
	struct msg x;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 4096);
	a = victim_run(holder_main);
	recv_msg(&a);
	m = victim_run(v_mapper);
	recv_msg(&m);
	trace(a.pid);
	r = revoke_with(0, 0, &rep);
	e = errno;
	CHECK(r == -1 && e == EBUSY, "revoke_ex returned %d (%s), expected EBUSY", r, strerror(e));
	h = find_holder(rep, m.pid);
	CHECK(h && h->nrefs == 1 && h->refs[0].type == REVOKE_REF_MAP,
	      "mapping holder misreported");
	CHECK(h->refs[0].state == REVOKE_STATE_SKIPPED, "its map ref state %s, expected skipped",
	      revoke_state_name(h->refs[0].state));
	send_msg(m.sock, MSG(CMD_READ));
	x = recv_msg(&m);
	CHECK(x.v[0] == 'h' && x.v[1] == 'e', "mapping reads %c%c after the failed revoke",
	      (char)x.v[0], (char)x.v[1]);
	CHECK(proc_status_field(m.pid, "TracerPid") == 0, "mapping holder left traced");
	revoke_report_free(rep);
}

/* ---- the vfork child holds the file, its unstoppable parent does not ---- */

static void v_vfork_child_holder(int sock)
{
	int res[2], go[2];

	if (pipe2(res, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), res[0], go[1]));
	/* The child alone opens the target, says it waits now ("s"), waits
	 * through the revoke (for a byte on GO), then reports read()'s errno. */
	test_vfork((const struct test_vf_step[]){VF_OPEN(tpath, O_RDONLY | O_CLOEXEC, 2),
						 VF_WRITE(res[1], "s"), VF_READ(go[0]),
						 VF_READ_FD(res[1]), VF_EXIT(0)});
	msg_wait(sock);
}

static void t_vfork_child_holder_cut(void)
{
	struct victim v;
	unsigned char c = 0;
	char path[64];
	pid_t child = 0;
	struct msg m;
	int i, res, go;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	v = victim_run(v_vfork_child_holder);
	m = recv_msg(&v);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, (int)m.v[1]);
	res = open(path, O_RDONLY | O_CLOEXEC); /* our own copy of the result pipe */
	CHECK(res >= 0, "open %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)v.pid, (int)m.v[2]);
	go = open(path, O_WRONLY | O_CLOEXEC); /* and of the pipe it waits on */
	CHECK(go >= 0, "open %s: %s", path, strerror(errno));
	CHECK(read(res, &c, 1) == 1 && c == 's', "the vfork child did not start");
	for (i = 0; i < 500 && proc_state(v.pid) != 'D'; i++)
		msleep(10);
	CHECK(proc_state(v.pid) == 'D', "vfork parent not waiting (state %c)", proc_state(v.pid));
	{
		char buf[256], *p;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)v.pid, (int)v.pid);
		CHECK(read_proc(path, buf, sizeof(buf)) == 0, "read %s", path);
		child = (pid_t)strtol(buf, &p, 10);
	}
	CHECK(child > 0 && wait_in_syscall(child, child, SYS_read, SYS_read),
	      "vfork child %d never waited", (int)child);
	CHECK(revoke_explained(tpath) == 0, "revoke with only the vfork child holding: %s",
	      strerror(errno));
	CHECK(write(go, "g", 1) == 1, "write: %s", strerror(errno));
	CHECK(read(res, &c, 1) == 1, "no result from the vfork child");
	CHECK(c == EBADF, "the vfork child's read after revoke: errno %d, expected EBADF", c);
	close(res);
}

/* ---- a holder whose descriptor table is full ---- */

static rlim_t g_hard;

/* Fills every slot below a soft RLIMIT_NOFILE of 64 (the target among
 * them), then answers reads; on CMD_GO reports its soft limit and how many
 * descriptors it has. */
static void v_full_table(int sock)
{
	struct rlimit rl = {64, g_hard};
	int fd, n = 0;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		_exit(2);
	fd = open(tpath, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		_exit(2);
	while (dup(fd) >= 0)
		;
	if (errno != EMFILE)
		_exit(2);
	for (int i = 0; i < 64; i++)
		n += fcntl(i, F_GETFD) >= 0;
	send_msg(sock, MSG(getpid(), fd, n));
	for (;;) {
		struct msg m = msg_wait(sock);
		char b[8];
		ssize_t r;

		if (m.v[0] == CMD_GO) {
			int k = 0;

			getrlimit(RLIMIT_NOFILE, &rl);
			for (int i = 0; i < 128; i++)
				k += fcntl(i, F_GETFD) >= 0;
			send_msg(sock, MSG((int64_t)rl.rlim_cur, k));
			continue;
		}
		if (m.v[0] != CMD_READ)
			_exit(0);
		errno = 0;
		r = pread(fd, b, 5, 0);
		send_msg(sock, MSG(r, r < 0 ? errno : 0, b[0]));
	}
}

/* Room for the cut's own two descriptors comes from the soft limit, raised
 * by two inside the holder for the program's length and put back. */
static void t_full_fd_table_cut(void)
{
	struct victim v;
	struct msg m, after;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	g_hard = 4096;
	v = victim_run(v_full_table);
	m = recv_msg(&v);
	CHECK(m.v[2] == 64, "the holder has %lld descriptors, not a full table of 64",
	      (long long)m.v[2]);
	CHECK(revoke_explained(tpath) == 0, "revoke of a holder with a full table: %s",
	      strerror(errno));
	CHECK_CUT(&v);
	send_msg(v.sock, MSG(CMD_GO));
	after = recv_msg(&v);
	CHECK(after.v[0] == 64 && after.v[1] == 64,
	      "after the cut: soft limit %lld, %lld descriptors (want 64 and 64)",
	      (long long)after.v[0], (long long)after.v[1]);
}

/* Whether this process may raise another's hard limit (CAP_SYS_RESOURCE:
 * root in a VM often lacks it, a guest's root has it). */
static bool may_raise_hard_limits(void)
{
	return proc_status_hex(getpid(), "CapEff") & (1ull << 24 /* CAP_SYS_RESOURCE */);
}

/*
 * With the hard limit reached too, the room is found missing before anything
 * changes: raised from outside where the caller may (CAP_SYS_RESOURCE), and
 * put back by the holder's program; otherwise the whole set is refused
 * untouched, the full holder named. Five ordinary holders beside it: all or
 * nothing is about the set.
 */
static void t_full_fd_table_hard_limit(void)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim v, others[5];
	bool raise = may_raise_hard_limits();
	struct msg after;
	int r, e;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	g_hard = 64;
	v = victim_run(v_full_table);
	recv_msg(&v);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		others[i] = victim_run(holder_main);
		recv_msg(&others[i]);
	}
	r = revoke_with(0, 0, &rep);
	e = errno;
	h = find_holder(rep, v.pid);
	if (raise) {
		CHECK(r == 0, "revoke with CAP_SYS_RESOURCE returned %d (%s), expected 0", r,
		      strerror(e));
		CHECK(h && h->state == REVOKE_STATE_CUT, "the full holder: state %d",
		      h ? h->state : -1);
		CHECK_CUT(&v);
		for (size_t i = 0; i < ARRAY_SIZE(others); i++)
			CHECK_CUT(&others[i]);
		send_msg(v.sock, MSG(CMD_GO));
		after = recv_msg(&v);
		CHECK(after.v[0] == 64 && after.v[1] == 64,
		      "after the cut: soft limit %lld, %lld descriptors (want 64 and 64)",
		      (long long)after.v[0], (long long)after.v[1]);
		CHECK(proc_limit_nofile_hard(v.pid) == 64, "hard limit %lld after the cut, not 64",
		      (long long)proc_limit_nofile_hard(v.pid));
	} else {
		CHECK(r == -1 && e == EBUSY, "revoke returned %d (%s), expected EBUSY", r,
		      strerror(e));
		CHECK(h && h->nrefs > 0 && h->refs[0].state == REVOKE_STATE_FAILED &&
			  h->refs[0].error == EMFILE && strstr(h->reason, "RLIMIT_NOFILE (64)"),
		      "the full holder's ref: state %d error %d reason '%s', want failed EMFILE",
		      h && h->nrefs ? h->refs[0].state : -1, h && h->nrefs ? h->refs[0].error : -1,
		      h ? h->reason : "");
		CHECK_READS(&v);
		for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
			const struct revoke_holder *o = find_holder(rep, others[i].pid);

			CHECK(o && o->state == REVOKE_STATE_SKIPPED,
			      "holder %d: state %d, not skipped", (int)others[i].pid,
			      o ? o->state : -1);
			CHECK_READS(&others[i]);
		}
		CHECK(proc_limit_nofile_hard(v.pid) == 64, "hard limit %lld, not 64",
		      (long long)proc_limit_nofile_hard(v.pid));
	}
	revoke_report_free(rep);
}

/* ---- the revoker SIGKILLed mid-cut, then run again ---- */

/* The command on tpath (its exit status), REVOKE_FAULT=FAULT when set. */
/* A revoke by the userspace engine in a child, killed at its fault point
 * FAULT (REVOKE_FAULT, tracee/fault.c) when there is one: its wait status.
 * The library, not the command, so that it runs in the guests too. */
static int run_command(const char *fault)
{
	int status;
	pid_t pid;

	pid = test_fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (fault)
			setenv("REVOKE_FAULT", fault, 1);
		_exit(revoke_with(0, 20000, NULL) == 0 ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	return status;
}

/*
 * SIGKILL cannot be made atomic across processes: killed once the first
 * holder's registers entered the stub, that holder finishes its cut alone,
 * and the kernel lets the others go untouched. Each holder is whole (cut or
 * intact, none stopped or traced); running the same revoke again finishes
 * the job (README, "When the revoker dies").
 */
static void t_killed_then_again(void)
{
	struct victim v[6];
	size_t cut = 0, intact = 0;
	int status;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		v[i] = victim_run(holder_main);
		recv_msg(&v[i]);
	}
	status = run_command("entered");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "the command was not killed at its fault point (status %#x)", status);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		struct msg m = ask_read(&v[i]);

		CHECK(proc_status_field(v[i].pid, "TracerPid") == 0, "holder %d left traced",
		      (int)v[i].pid);
		if (m.v[0] == -1 && m.v[1] == EBADF)
			cut++;
		else if (m.v[0] == 5 && m.v[2] == 'h')
			intact++;
		else
			CHECK(false, "holder %d: read gave %lld (%s): neither cut nor intact",
			      (int)v[i].pid, (long long)m.v[0], strerror((int)m.v[1]));
	}
	fprintf(stderr, "  after the kill: %zu cut, %zu intact\n", cut, intact);
	CHECK(cut >= 1, "the holder whose registers entered the stub was not cut");
	status = run_command(NULL);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "revoke again: status %#x, expected it to succeed", status);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		CHECK_CUT(&v[i]);
}

static const struct seccomp_row {
	struct test_row t;
	unsigned int flags;
} unprivileged_seccomp[] = {
    {{"unprivileged_seccomp_holder_ebusy", 30}, 0},
    {{"unprivileged_seccomp_best_effort", 30}, REVOKE_BEST_EFFORT},
};

static void unprivileged_seccomp_row(const void *row)
{
	unprivileged_seccomp_case(((const struct seccomp_row *)row)->flags);
}

TEST_MAIN("revoke-allornothing", {"traced_holder_ebusy", t_traced_holder_ebusy, 30},
	  {"traced_holder_best_effort", t_traced_holder_best_effort, 30},
	  {"vfork_holder_ebusy", t_vfork_holder_ebusy, 30},
	  {"full_fd_table_cut", t_full_fd_table_cut, 30},
	  {"full_fd_table_hard_limit", t_full_fd_table_hard_limit, 30},
	  {"vfork_holder_best_effort", t_vfork_holder_best_effort, 30},
	  {"vfork_holder_plain_revoke", t_vfork_holder_plain_revoke, 40},
	  TEST_TABLE(unprivileged_seccomp, unprivileged_seccomp_row),
	  {"filtered_caller_seccomp_holder", t_filtered_caller_seccomp_holder, 30},
	  {"failure_keeps_stopped_holder_stopped", t_failure_keeps_stopped_holder_stopped, 30},
	  {"failure_leaves_mappings", t_failure_leaves_mappings, 30},
	  {"vfork_child_holder_cut", t_vfork_child_holder_cut, 30},
	  {"killed_then_again", t_killed_then_again, 60}, )
