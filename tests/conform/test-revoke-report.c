/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, part 2: the report. REVOKE_LIST_ONLY lists holders with every
 * field right and changes nothing; a real revoke reports every reference cut
 * and how long each holder was stopped; one call handles several targets;
 * the name functions return their stable names.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "harness.h"
#include "revoke.h"
#include "conform.h"

#define VICTIM_NAME "a) x(b"
#define MAP_LEN	    8192

/* A holder with fd 7 (close-on-exec, O_RDWR|O_APPEND, position 3), a shared
 * read-write mapping, a name with ") x(" in it, and real uid 65534. */
static void v_listed(int sock)
{
	char *p;
	int fd = open(tpath, O_RDWR | O_APPEND | O_CLOEXEC);

	if (fd < 0 || dup3(fd, 7, O_CLOEXEC) != 7)
		_exit(2);
	close(fd);
	if (lseek(7, 3, SEEK_SET) != 3)
		_exit(2);
	p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, 7, 0);
	if (p == MAP_FAILED)
		_exit(2);
	if (prctl(PR_SET_NAME, VICTIM_NAME) < 0)
		_exit(2);
	if (test_become(65534, 65534, 0) < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), (int64_t)(uintptr_t)p));
	for (int i = 0; i < 100; i++) {
		struct msg m = msg_wait(sock);
		char b[8] = {0};
		ssize_t r;

		if (m.v[0] != CMD_READ)
			_exit(0);
		errno = 0;
		r = pread(7, b, 5, 0);
		/* the mapping: touch it too (a cut one would kill us with SIGBUS) */
		send_msg(sock, MSG(r, r < 0 ? errno : 0, b[0], p[1]));
	}
}

static int revoke_with(const char *const *paths, size_t n, unsigned int flags,
		       struct revoke_report **rep)
{
	struct revoke_opts o = {.sz = sizeof(o), .flags = flags, .timeout_ms = 0, .keep_fd = -1};

	return revoke_ex(paths, n, &o, rep);
}

static void t_list_only_fields(void)
{
	const char *paths[1];
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	const struct revoke_ref *fd = NULL, *map = NULL;
	struct victim v;
	struct stat st;
	struct msg m;
	uint64_t addr;

	make_scratch();
	test_make_file(tpath, "hello", MAP_LEN);
	CHECK(chown(tpath, 65534, 65534) == 0, "chown: %s", strerror(errno));
	CHECK(stat(tpath, &st) == 0, "stat: %s", strerror(errno));
	paths[0] = tpath;
	v = victim_run(v_listed);
	m = recv_msg(&v);
	addr = (uint64_t)m.v[1];
	CHECK(revoke_with(paths, 1, REVOKE_LIST_ONLY, &rep) == 0, "revoke_ex(LIST_ONLY): %s",
	      strerror(errno));
	CHECK(rep, "no report");
	CHECK(rep->error == 0, "report error %d", rep->error);
	CHECK(rep->engine == REVOKE_ENGINE_NONE, "engine %s when only listing",
	      revoke_engine_name(rep->engine));
	CHECK(rep->discovery == REVOKE_DISC_PROC || rep->discovery == REVOKE_DISC_BPF,
	      "discovery %d", rep->discovery);
	CHECK(rep->ntargets == 1, "%zu targets", rep->ntargets);
	CHECK(rep->targets[0].path && strcmp(rep->targets[0].path, tpath) == 0, "target path %s",
	      rep->targets[0].path ? rep->targets[0].path : "(null)");
	CHECK(rep->targets[0].dev == st.st_dev && rep->targets[0].ino == st.st_ino,
	      "target dev/ino wrong");
	CHECK(S_ISREG(rep->targets[0].mode), "target mode %o", (unsigned)rep->targets[0].mode);
	CHECK(rep->targets[0].uid == 65534, "target uid %u", (unsigned)rep->targets[0].uid);
	CHECK(rep->nholders == 1, "%zu holders, expected only the victim", rep->nholders);
	h = find_holder(rep, v.pid);
	CHECK(h, "victim %d not listed (holder 0 is %d)", (int)v.pid, (int)rep->holders[0].pid);
	CHECK(h->uid == 65534, "holder uid %u, expected 65534", (unsigned)h->uid);
	CHECK(strcmp(h->comm, VICTIM_NAME) == 0, "holder comm \"%s\", expected \"%s\"", h->comm,
	      VICTIM_NAME);
	CHECK(h->state == REVOKE_STATE_FOUND, "holder state %s", revoke_state_name(h->state));
	CHECK(h->error == 0, "holder error %d", h->error);
	CHECK(h->stopped_ns == 0, "listed holder stopped for %llu ns",
	      (unsigned long long)h->stopped_ns);
	for (size_t i = 0; i < h->nrefs; i++) {
		const struct revoke_ref *r = &h->refs[i];
		CHECK(r->state == REVOKE_STATE_FOUND, "ref %zu state %s", i,
		      revoke_state_name(r->state));
		CHECK(r->target == 0, "ref %zu target %u", i, r->target);
		if (r->type == REVOKE_REF_FD) {
			CHECK(!fd, "two fd refs (%d and %d)", fd->fd, r->fd);
			fd = r;
		} else if (r->type == REVOKE_REF_MAP) {
			CHECK(!map, "two map refs");
			map = r;
		} else {
			CHECK(0, "unexpected ref type %s", revoke_ref_type_name(r->type));
		}
	}
	CHECK(fd, "no fd ref");
	CHECK(fd->fd == 7, "fd ref %d, expected 7", fd->fd);
	CHECK(fd->fd_flags == FD_CLOEXEC, "fd_flags %#x, expected FD_CLOEXEC", fd->fd_flags);
	CHECK((fd->open_flags & O_ACCMODE) == O_RDWR, "open_flags %#o lack O_RDWR", fd->open_flags);
	CHECK(fd->open_flags & O_APPEND, "open_flags %#o lack O_APPEND", fd->open_flags);
	CHECK(!(fd->open_flags & O_CLOEXEC), "open_flags %#o carry O_CLOEXEC", fd->open_flags);
	CHECK(fd->offset == 3, "fd position %llu, expected 3", (unsigned long long)fd->offset);
	CHECK(map, "no map ref");
	CHECK(map->start == addr && map->end == addr + MAP_LEN,
	      "map %#llx-%#llx, the victim mapped %#llx-%#llx", (unsigned long long)map->start,
	      (unsigned long long)map->end, (unsigned long long)addr,
	      (unsigned long long)(addr + MAP_LEN));
	CHECK(map->prot == (PROT_READ | PROT_WRITE), "map prot %#x", map->prot);
	CHECK(map->map_flags == MAP_SHARED, "map flags %#x", map->map_flags);
	CHECK(map->offset == 0, "map offset %llu", (unsigned long long)map->offset);
	CHECK(map->fd == -1, "map ref fd %d", map->fd);
	/* Listing changed nothing. */
	CHECK(proc_status_field(v.pid, "TracerPid") == 0, "victim left traced");
	m = ask_read(&v);
	CHECK(m.v[0] == 5 && m.v[2] == 'h' && m.v[3] == 'e', "victim read %lld (%s) after listing",
	      (long long)m.v[0], strerror((int)m.v[1]));
	revoke_report_free(rep);
}

/* A holder with an fd and a shared mapping that answers: pread, and a touch of the map. */
static void v_fd_and_map(int sock)
{
	int fd = open(tpath, O_RDWR | O_CLOEXEC);
	char *p;

	if (fd < 0)
		_exit(2);
	p = mmap(NULL, MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

static void t_cut_states_and_times(void)
{
	const char *paths[1];
	struct revoke_report *rep = NULL;
	struct victim v[3];
	int r;

	make_scratch();
	test_make_file(tpath, "hello", MAP_LEN);
	paths[0] = tpath;
	for (int i = 0; i < 3; i++) {
		v[i] = victim_run(v_fd_and_map);
		recv_msg(&v[i]);
	}
	r = revoke_with(paths, 1, 0, &rep);
	CHECK(r == 0, "revoke_ex: %s", strerror(errno));
	CHECK(rep, "no report");
	CHECK(rep->error == 0, "report error %d", rep->error);
	/* Under kernel/run-tests --suite, proof that the suite ran natively. */
	CHECK(rep->engine == (engine_native() ? REVOKE_ENGINE_SYSCALL : REVOKE_ENGINE_PTRACE),
	      "engine %s, expected %s", revoke_engine_name(rep->engine),
	      engine_native() ? "the native syscalls" : "ptrace");
	CHECK(rep->elapsed_ns > 0, "elapsed_ns 0");
	CHECK(rep->elapsed_ns >= rep->max_stopped_ns,
	      "holders stopped %llu ns, longer than the call (%llu ns)",
	      (unsigned long long)rep->max_stopped_ns, (unsigned long long)rep->elapsed_ns);
	CHECK(rep->nholders == 3, "%zu holders, expected 3", rep->nholders);
	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = &rep->holders[i];
		bool has_fd = false, has_map = false;

		CHECK(h->state == REVOKE_STATE_CUT, "holder %d state %s", (int)h->pid,
		      revoke_state_name(h->state));
		CHECK(h->error == 0, "holder %d error %d", (int)h->pid, h->error);
		for (size_t j = 0; j < h->nrefs; j++) {
			CHECK(h->refs[j].state == REVOKE_STATE_CUT && h->refs[j].error == 0,
			      "holder %d ref %zu (%s) state %s error %d", (int)h->pid, j,
			      revoke_ref_type_name(h->refs[j].type),
			      revoke_state_name(h->refs[j].state), h->refs[j].error);
			has_fd |= h->refs[j].type == REVOKE_REF_FD;
			has_map |= h->refs[j].type == REVOKE_REF_MAP;
		}
		CHECK(has_fd && has_map, "holder %d: fd ref %d, map ref %d", (int)h->pid, has_fd,
		      has_map);
		if (rep->engine == REVOKE_ENGINE_PTRACE) {
			CHECK(h->stopped_ns > 0, "holder %d stopped_ns 0", (int)h->pid);
			CHECK(h->stopped_ns <= rep->max_stopped_ns,
			      "holder %d stopped %llu ns > max %llu", (int)h->pid,
			      (unsigned long long)h->stopped_ns,
			      (unsigned long long)rep->max_stopped_ns);
		}
	}
	if (rep->engine == REVOKE_ENGINE_PTRACE) {
		uint64_t max = 0;
		for (size_t i = 0; i < rep->nholders; i++)
			if (rep->holders[i].stopped_ns > max)
				max = rep->holders[i].stopped_ns;
		CHECK(max == rep->max_stopped_ns, "max_stopped_ns %llu, longest holder %llu",
		      (unsigned long long)rep->max_stopped_ns, (unsigned long long)max);
	}
	for (int i = 0; i < 3; i++)
		CHECK_CUT(&v[i]);
	revoke_report_free(rep);
}

static void t_holders_sorted_by_pid(void)
{
	const char *paths[1];
	struct revoke_report *rep = NULL;
	struct victim v[6];

	make_scratch();
	test_make_file(tpath, "hello", 0);
	paths[0] = tpath;
	for (int i = 0; i < 6; i++) {
		v[i] = victim_run(holder_main);
		recv_msg(&v[i]);
	}
	CHECK(revoke_with(paths, 1, REVOKE_LIST_ONLY, &rep) == 0, "revoke_ex: %s", strerror(errno));
	CHECK(rep && rep->nholders == 6, "%zu holders, expected 6", rep ? rep->nholders : 0);
	for (size_t i = 1; i < rep->nholders; i++)
		CHECK(rep->holders[i - 1].pid < rep->holders[i].pid,
		      "holders not sorted by pid: %d before %d", (int)rep->holders[i - 1].pid,
		      (int)rep->holders[i].pid);
	for (int i = 0; i < 6; i++)
		CHECK(find_holder(rep, v[i].pid), "holder %d missing", (int)v[i].pid);
	revoke_report_free(rep);
}

/* ---- more holders than one cut group (the engine cuts and releases 128 at a time) ---- */

#define NMANY 300

static void t_many_holders_in_groups(void)
{
	static struct victim v[NMANY];
	const char *paths[1];
	struct revoke_report *rep = NULL;
	bool native = engine_native();

	make_scratch();
	test_make_file(tpath, "hello", 0);
	paths[0] = tpath;
	for (int i = 0; i < NMANY; i++) {
		v[i] = victim_run(holder_main);
		recv_msg(&v[i]);
	}
	/* 300 holders to scan take longer than the default 5 s under QEMU's
	 * TCG (the guest run of the native engine): this test is about the
	 * report, not the budget. */
	struct revoke_opts o = {.sz = sizeof(o), .timeout_ms = 60000, .keep_fd = -1};

	CHECK(revoke_ex(paths, 1, &o, &rep) == 0, "revoke_ex: %s", strerror(errno));
	CHECK(rep && rep->nholders == NMANY, "%zu holders, expected %d", rep ? rep->nholders : 0,
	      NMANY);
	for (int i = 0; i < NMANY; i++) {
		const struct revoke_holder *h = find_holder(rep, v[i].pid);

		CHECK(h, "holder %d missing", (int)v[i].pid);
		CHECK(h->state == REVOKE_STATE_CUT, "holder %d: %s", (int)h->pid,
		      revoke_state_name(h->state));
		/* Every one was stopped (the native engine stops nobody), and
		 * not longer than the call. */
		CHECK(native ? h->stopped_ns == 0 : h->stopped_ns > 0, "holder %d stopped %llu ns",
		      (int)h->pid, (unsigned long long)h->stopped_ns);
		CHECK(h->stopped_ns <= rep->max_stopped_ns &&
			  rep->max_stopped_ns <= rep->elapsed_ns,
		      "holder %d stopped %llu ns, max %llu, call %llu", (int)h->pid,
		      (unsigned long long)h->stopped_ns, (unsigned long long)rep->max_stopped_ns,
		      (unsigned long long)rep->elapsed_ns);
	}
	revoke_report_free(rep);
	/* Each one cut, running and released, whatever its group. */
	for (int i = 0; i < NMANY; i++) {
		CHECK_CUT(&v[i]);
		CHECK(proc_status_field(v[i].pid, "TracerPid") == 0, "holder %d left traced",
		      (int)v[i].pid);
	}
	for (int i = 0; i < NMANY; i++) {
		send_msg(v[i].sock, MSG(CMD_QUIT));
		close(v[i].sock);
	}
}

/* ---- two targets in one call ---- */

static char tpath2[160];

static void v_holds_second(int sock)
{
	int fd = open(tpath2, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(2);
	send_msg(sock, MSG(getpid(), fd));
	holder_loop(sock, fd);
}

static void t_two_targets(void)
{
	const char *paths[2];
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim a, b;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	snprintf(tpath2, sizeof(tpath2), "%s/second", tdir);
	test_make_file(tpath2, "howdy", 0);
	paths[0] = tpath;
	paths[1] = tpath2;
	a = victim_run(holder_main);
	recv_msg(&a);
	b = victim_run(v_holds_second);
	recv_msg(&b);
	CHECK(revoke_with(paths, 2, 0, &rep) == 0, "revoke_ex of two targets: %s", strerror(errno));
	CHECK(rep && rep->ntargets == 2, "%zu targets", rep ? rep->ntargets : 0);
	CHECK(strcmp(rep->targets[0].path, tpath) == 0 && strcmp(rep->targets[1].path, tpath2) == 0,
	      "targets out of order: %s, %s", rep->targets[0].path, rep->targets[1].path);
	h = find_holder(rep, a.pid);
	CHECK(h && h->nrefs == 1 && h->refs[0].target == 0 && h->refs[0].state == REVOKE_STATE_CUT,
	      "holder of the first target misreported");
	h = find_holder(rep, b.pid);
	CHECK(h && h->nrefs == 1 && h->refs[0].target == 1 && h->refs[0].state == REVOKE_STATE_CUT,
	      "holder of the second target misreported");
	CHECK_CUT(&a);
	CHECK_CUT(&b);
	revoke_report_free(rep);
}

/* ---- failing before the targets resolve: no report ---- */

static void t_no_report_when_unresolved(void)
{
	const char *paths[1];
	struct revoke_report *rep = (struct revoke_report *)&rep; /* not NULL */
	int r, e;

	make_scratch();
	snprintf(tpath, sizeof(tpath), "%s/missing", tdir);
	paths[0] = tpath;
	r = revoke_with(paths, 1, 0, &rep);
	e = errno;
	CHECK(r == -1 && e == ENOENT, "revoke_ex of a missing file returned %d (%s)", r,
	      strerror(e));
	CHECK(rep == NULL, "report not set to NULL");
}

static void t_names(void)
{
	static const struct {
		int v;
		const char *name;
	} types[] = {{REVOKE_REF_FD, "fd"},
		     {REVOKE_REF_MAP, "map"},
		     {REVOKE_REF_CWD, "cwd"},
		     {REVOKE_REF_ROOT, "root"},
		     {REVOKE_REF_EXE, "exe"},
		     {REVOKE_REF_URING, "uring"},
		     {REVOKE_REF_INFLIGHT, "inflight"}},
	  states[] = {{REVOKE_STATE_FOUND, "found"},   {REVOKE_STATE_CUT, "cut"},
		      {REVOKE_STATE_KEPT, "kept"},     {REVOKE_STATE_SKIPPED, "skipped"},
		      {REVOKE_STATE_FAILED, "failed"}, {REVOKE_STATE_UNREACHABLE, "unreachable"}};
	const char *s;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		s = revoke_ref_type_name(types[i].v);
		CHECK(s && strcmp(s, types[i].name) == 0,
		      "revoke_ref_type_name(%d) = %s, expected %s", types[i].v, s ? s : "NULL",
		      types[i].name);
	}
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		s = revoke_state_name(states[i].v);
		CHECK(s && strcmp(s, states[i].name) == 0,
		      "revoke_state_name(%d) = %s, expected %s", states[i].v, s ? s : "NULL",
		      states[i].name);
	}
	CHECK(revoke_ref_type_name(0) == NULL && revoke_ref_type_name(99) == NULL &&
		  revoke_ref_type_name(-1) == NULL,
	      "unknown ref types have names");
	CHECK(revoke_state_name(99) == NULL && revoke_state_name(-1) == NULL,
	      "unknown states have names");
	for (int e = REVOKE_ENGINE_NONE; e <= REVOKE_ENGINE_SYSCALL; e++) {
		s = revoke_engine_name(e);
		CHECK(s && *s, "revoke_engine_name(%d) is empty", e);
		for (const char *c = s; *c; c++)
			CHECK(*c < 'A' || *c > 'Z', "engine name \"%s\" not lower case", s);
	}
	CHECK(strcmp(revoke_engine_name(REVOKE_ENGINE_PTRACE),
		     revoke_engine_name(REVOKE_ENGINE_SYSCALL)),
	      "two engines share a name");
	CHECK(revoke_engine_name(99) == NULL, "unknown engine has a name");
	for (int d = REVOKE_DISC_NONE; d <= REVOKE_DISC_BPF; d++) {
		s = revoke_discovery_name(d);
		CHECK(s && *s, "revoke_discovery_name(%d) is empty", d);
	}
	CHECK(revoke_discovery_name(99) == NULL, "unknown discovery has a name");
	s = revoke_version();
	{
		char want[32];

		/* The library's version is the header's major.minor, so that a
		 * program can tell from it which fields it has. */
		snprintf(want, sizeof(want), "%d.%d.", LIBREVOKE_VERSION_MAJOR,
			 LIBREVOKE_VERSION_MINOR);
		CHECK(s && strncmp(s, want, strlen(want)) == 0,
		      "revoke_version() = %s, the header says %d.%d", s ? s : "NULL",
		      LIBREVOKE_VERSION_MAJOR, LIBREVOKE_VERSION_MINOR);
	}
}

/* ---- where the time went (1.6) ---- */

/* The steps tile the call: each moment in exactly one, so they sum to
 * elapsed_ns to the nanosecond. */
static void check_steps_sum(const struct revoke_report *rep)
{
	uint64_t sum = 0;

	for (int s = 0; s < REVOKE_STEP_COUNT; s++)
		sum += rep->step_ns[s];
	CHECK(sum == rep->elapsed_ns, "steps sum to %llu ns, elapsed_ns is %llu",
	      (unsigned long long)sum, (unsigned long long)rep->elapsed_ns);
	for (size_t s = REVOKE_STEP_COUNT; s < sizeof(rep->step_ns) / sizeof(rep->step_ns[0]); s++)
		CHECK(rep->step_ns[s] == 0, "step_ns[%zu] (no such step) is %llu", s,
		      (unsigned long long)rep->step_ns[s]);
}

static void t_steps(void)
{
	static const int listed_none[] = {REVOKE_STEP_STOP,  REVOKE_STEP_RESCAN,  REVOKE_STEP_PLACE,
					  REVOKE_STEP_CUT,   REVOKE_STEP_RELEASE, REVOKE_STEP_SYNC,
					  REVOKE_STEP_UMOUNT};
	const char *paths[1] = {tpath};
	struct revoke_report *rep = NULL;
	struct victim v[2];

	make_scratch();
	test_make_file(tpath, "hello", MAP_LEN);
	for (int i = 0; i < 2; i++) {
		v[i] = victim_run(v_fd_and_map);
		recv_msg(&v[i]);
	}
	CHECK(revoke_with(paths, 1, REVOKE_LIST_ONLY, &rep) == 0, "revoke_ex(LIST_ONLY): %s",
	      strerror(errno));
	CHECK(rep && rep->sz >= offsetof(struct revoke_report, step_ns) + sizeof(rep->step_ns),
	      "the report has no step_ns");
	check_steps_sum(rep);
	CHECK(rep->step_ns[REVOKE_STEP_SCAN] > 0, "a listing spent no time scanning");
	for (size_t i = 0; i < sizeof(listed_none) / sizeof(listed_none[0]); i++)
		CHECK(rep->step_ns[listed_none[i]] == 0, "a listing spent %llu ns in step %s",
		      (unsigned long long)rep->step_ns[listed_none[i]],
		      revoke_step_name(listed_none[i]));
	revoke_report_free(rep);
	rep = NULL;

	CHECK(revoke_with(paths, 1, 0, &rep) == 0, "revoke_ex: %s", strerror(errno));
	CHECK(rep && rep->nholders == 2, "%zu holders, expected 2", rep ? rep->nholders : 0);
	check_steps_sum(rep);
	CHECK(rep->step_ns[REVOKE_STEP_SCAN] > 0 && rep->step_ns[REVOKE_STEP_CUT] > 0,
	      "scan %llu ns, cut %llu ns: a revoke of 2 holders spent no time in one",
	      (unsigned long long)rep->step_ns[REVOKE_STEP_SCAN],
	      (unsigned long long)rep->step_ns[REVOKE_STEP_CUT]);
	if (rep->engine == REVOKE_ENGINE_PTRACE)
		/* Stopped, looked at again, placed before the point of no
		 * return: every step of the userspace engine was taken. */
		CHECK(rep->step_ns[REVOKE_STEP_STOP] > 0 && rep->step_ns[REVOKE_STEP_RESCAN] > 0 &&
			  rep->step_ns[REVOKE_STEP_PLACE] > 0,
		      "stop %llu, rescan %llu, place %llu ns",
		      (unsigned long long)rep->step_ns[REVOKE_STEP_STOP],
		      (unsigned long long)rep->step_ns[REVOKE_STEP_RESCAN],
		      (unsigned long long)rep->step_ns[REVOKE_STEP_PLACE]);
	else
		CHECK(rep->step_ns[REVOKE_STEP_STOP] == 0 && rep->step_ns[REVOKE_STEP_RESCAN] == 0,
		      "the native engine stopped holders for %llu + %llu ns",
		      (unsigned long long)rep->step_ns[REVOKE_STEP_STOP],
		      (unsigned long long)rep->step_ns[REVOKE_STEP_RESCAN]);
	CHECK(rep->step_ns[REVOKE_STEP_SYNC] == 0 && rep->step_ns[REVOKE_STEP_UMOUNT] == 0,
	      "a file's revoke synced or unmounted");
	for (int i = 0; i < 2; i++)
		CHECK_CUT(&v[i]);
	revoke_report_free(rep);
}

static void t_step_names(void)
{
	static const char *const want[] = {"start",   "resolve", "lock",   "scan",
					   "stop",    "rescan",	 "place",  "cut",
					   "release", "sync",	 "umount", "report"};

	CHECK(sizeof(want) / sizeof(want[0]) == REVOKE_STEP_COUNT, "%d steps, the test knows %zu",
	      REVOKE_STEP_COUNT, sizeof(want) / sizeof(want[0]));
	for (int s = 0; s < REVOKE_STEP_COUNT; s++) {
		const char *n = revoke_step_name(s);

		CHECK(n && strcmp(n, want[s]) == 0, "revoke_step_name(%d) = %s, expected %s", s,
		      n ? n : "NULL", want[s]);
	}
	CHECK(!revoke_step_name(REVOKE_STEP_COUNT) && !revoke_step_name(-1),
	      "steps out of range have names");
}

/* ---- the caller itself is a holder: listed, then cut directly ---- */

static void t_caller_listed_and_cut(void)
{
	const char *paths[1];
	struct revoke_report *rep = NULL;
	const struct revoke_holder *h;
	struct victim v;
	char b;
	int fd;

	make_scratch();
	test_make_file(tpath, "hello", 0);
	paths[0] = tpath;
	fd = open(tpath, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	v = victim_run(holder_main);
	recv_msg(&v);
	CHECK(revoke_with(paths, 1, REVOKE_LIST_ONLY, &rep) == 0, "revoke_ex(LIST_ONLY): %s",
	      strerror(errno));
	h = find_holder(rep, getpid());
	CHECK(h, "the caller (%d) is not listed", (int)getpid());
	CHECK(h->nrefs == 1 && h->refs[0].type == REVOKE_REF_FD && h->refs[0].fd == fd,
	      "caller's refs wrong (%zu refs, first fd %d, expected fd %d)", h->nrefs,
	      h->nrefs ? h->refs[0].fd : -1, fd);
	CHECK(find_holder(rep, v.pid), "victim not listed");
	CHECK(rep->nholders == 2, "%zu holders, expected 2", rep->nholders);
	revoke_report_free(rep);
	rep = NULL;
	CHECK(read(fd, &b, 1) == 1, "listing touched the caller's fd: %s", strerror(errno));

	CHECK(revoke_with(paths, 1, 0, &rep) == 0, "revoke_ex: %s", strerror(errno));
	h = find_holder(rep, getpid());
	CHECK(h && h->state == REVOKE_STATE_CUT, "the caller not reported cut");
	CHECK(h->stopped_ns == 0, "the caller was 'stopped' for %llu ns",
	      (unsigned long long)h->stopped_ns);
	errno = 0;
	CHECK(read(fd, &b, 1) == -1 && errno == EBADF, "caller's own fd: read gave %s, not EBADF",
	      strerror(errno));
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC, "caller's fd lost FD_CLOEXEC");
	CHECK(close(fd) == 0, "close of the cut fd: %s", strerror(errno));
	CHECK_CUT(&v);
	revoke_report_free(rep);
}

static void t_report_free_null(void)
{
	revoke_report_free(NULL); /* like free(NULL): nothing happens */
}

TEST_MAIN("revoke-report", {"list_only_fields", t_list_only_fields, 30},
	  {"cut_states_and_times", t_cut_states_and_times, 30},
	  {"holders_sorted_by_pid", t_holders_sorted_by_pid, 30},
	  {"many_holders_in_groups", t_many_holders_in_groups, 60},
	  {"two_targets", t_two_targets, 30},
	  {"no_report_when_unresolved", t_no_report_when_unresolved, 30},
	  {"caller_listed_and_cut", t_caller_listed_and_cut, 30}, {"names", t_names, 30},
	  {"report_free_null", t_report_free_null, 10}, {"steps", t_steps, 30},
	  {"step_names", t_step_names, 10}, )
