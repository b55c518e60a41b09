/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * 32-bit (ia32) holders on x86_64, cut by the userspace engine: the stub
 * built with -m32 runs in them with int $0x80 and goes home by the compat
 * rt_sigreturn over an ia32 frame. The holders are tests/ia32-holder (a
 * static -m32 program): a reader blocked on a FIFO, a holder blocked
 * elsewhere, a mapping with a SIGBUS handler, three threads blocked on a
 * FIFO, and a register workload checking the general registers, x87 and
 * SSE state while it spins. Each case asserts the cut (EBADF, SIGBUS) and
 * that nothing else changed (mask, other descriptors, registers).
 *
 * The kill cases run `revoke --engine ptrace` against five such holders and
 * kill it (REVOKE_FAULT at each of the engine's fault points, then SIGKILL
 * at spread delays): every holder must be found intact or fully cut.
 *
 * They skip where the kernel runs no 32-bit program (exec gives ENOEXEC:
 * no CONFIG_IA32_EMULATION, ia32_emulation=off, or a guest whose
 * hypervisor disables it).
 */
#include <asm/unistd_32.h> /* the numbers /proc/PID/syscall shows for a 32-bit task */
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "conform.h"

struct h32 {
	pid_t pid;
	int in;	 /* its stdin */
	int out; /* its stdout */
	char mode[16];
};

static char holder_path[4096];

static void find_holder_program(void)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL;

	snprintf(holder_path, sizeof(holder_path), "%s/tests/ia32-holder", REVOKE_BUILDDIR);
	if (access(holder_path, X_OK) == 0)
		return;
	/* In the QEMU guest (kernel/run-tests --suite) it is on PATH. */
	dirs = strdup(path ? path : "/bin");
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(holder_path, sizeof(holder_path), "%s/ia32-holder", d);
		if (access(holder_path, X_OK) == 0) {
			free(dirs);
			return;
		}
	}
	free(dirs);
	SKIP("no ia32-holder: the build had no -m32 compiler (gcc-multilib)");
}

/* Start the holder in MODE on PATH; waits for its "R". */
static struct h32 start(const char *mode, const char *path)
{
	int in[2], out[2], err[2], e = 0;
	struct h32 h = {0};
	char c;

	find_holder_program();
	/* A holder that already reported and exited must not kill us with
	 * the byte we send it. */
	signal(SIGPIPE, SIG_IGN);
	CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0,
	      "pipe2: %s", strerror(errno));
	h.pid = test_fork();
	CHECK(h.pid >= 0, "fork: %s", strerror(errno));
	if (h.pid == 0) {
		char *argv[] = {holder_path, (char *)mode, (char *)path, NULL};

		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(holder_path, argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (read(err[0], &e, sizeof(e)) == sizeof(e)) {
		waitpid(h.pid, NULL, 0);
		if (e == ENOEXEC)
			SKIP("this kernel runs no 32-bit programs (exec of %s: %s; "
			     "CONFIG_IA32_EMULATION off, ia32_emulation=off, or disabled by the "
			     "hypervisor: see dmesg)",
			     holder_path, strerror(e));
		CHECK(0, "exec %s: %s", holder_path, strerror(e));
	}
	close(err[0]);
	h.in = in[1];
	h.out = out[0];
	snprintf(h.mode, sizeof(h.mode), "%s", mode);
	{
		struct pollfd p = {.fd = h.out, .events = POLLIN};

		CHECK(poll(&p, 1, 10000) == 1 && read(h.out, &c, 1) == 1 && c == 'R',
		      "holder %s %s did not start", mode, path);
	}
	return h;
}

/* Tell the holder to report; its line (up to 5 s). */
static void finish(struct h32 *h, char *line, size_t size)
{
	size_t n = 0;
	int status;

	if (write(h->in, "g", 1) != 1) {
		/* it may be done already (regs ends on the byte, read on the cut) */
	}
	while (n + 1 < size) {
		struct pollfd p = {.fd = h->out, .events = POLLIN};
		ssize_t k;

		if (poll(&p, 1, 5000) != 1)
			break;
		k = read(h->out, line + n, size - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(line, '\n', n))
			break;
	}
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	kill(h->pid, SIGKILL);
	waitpid(h->pid, &status, 0);
	close(h->in);
	close(h->out);
}

static int revoke_userspace(const char **paths, size_t n, struct revoke_report **rep)
{
	/* A generous bound: under QEMU's TCG on a loaded host, 5 s ran out. */
	struct revoke_opts o = {
	    .sz = sizeof(o), .flags = REVOKE_ENGINE_USERSPACE, .timeout_ms = 60000, .keep_fd = -1};
	int r = revoke_ex(paths, n, &o, rep);

	if (r < 0 && *rep)
		for (size_t i = 0; i < (*rep)->nholders; i++)
			fprintf(stderr, "  holder %d (%s): %s, error %d %s\n",
				(int)(*rep)->holders[i].pid, (*rep)->holders[i].comm,
				revoke_state_name((*rep)->holders[i].state),
				(*rep)->holders[i].error, (*rep)->holders[i].reason);
	return r;
}

static void check_cut(struct h32 *h, const char *path)
{
	struct revoke_report *rep = NULL;
	const struct revoke_holder *rh;
	int r = revoke_userspace(&path, 1, &rep);

	CHECK(r == 0, "revoke %s with a 32-bit %s holder: %s", path, h->mode, strerror(errno));
	rh = find_holder(rep, h->pid);
	CHECK(rh && rh->state == REVOKE_STATE_CUT, "holder %d: %s", (int)h->pid,
	      rh ? revoke_state_name(rh->state) : "not reported");
	CHECK(rep->engine == REVOKE_ENGINE_PTRACE, "engine %d", rep->engine);
	revoke_report_free(rep);
	CHECK(proc_status_field(h->pid, "TracerPid") == 0, "holder left traced");
}

static void make_fifo(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", tdir, name);
	CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
}

/* Blocked in read() of the target: the stub runs in that thread, which the
 * frame sends back into read(), on the dead descriptor. */
static void test_read_fifo(void)
{
	char fifo[192], line[256];
	struct h32 h;

	make_scratch();
	make_fifo(fifo, sizeof(fifo), "fifo");
	h = start("read", fifo);
	CHECK(wait_in_syscall(h.pid, h.pid, __NR_read, -1), "not blocked in read");
	check_cut(&h, fifo);
	finish(&h, line, sizeof(line));
	CHECK(strcmp(line, "read -1 9 mask 1 fds 1") == 0, "holder says '%s'", line);
}

/* Blocked in read() of stdin (no target): restarted as if never stopped;
 * the target descriptor is dead. */
static void test_hold(void)
{
	char line[256];
	struct h32 h;

	make_scratch();
	test_make_file(tpath, "x", 0);
	h = start("hold", tpath);
	CHECK(wait_in_syscall(h.pid, h.pid, __NR_read, -1), "not blocked in read");
	check_cut(&h, tpath);
	finish(&h, line, sizeof(line));
	CHECK(strcmp(line, "hold -1 9 go g mask 1 fds 1") == 0, "holder says '%s'", line);
}

static void test_map_sigbus(void)
{
	char line[256];
	struct h32 h;

	make_scratch();
	test_make_file(tpath, "m", 4096);
	h = start("map", tpath);
	check_cut(&h, tpath);
	finish(&h, line, sizeof(line));
	CHECK(strcmp(line, "map SIGBUS mask 1 fds 1") == 0, "holder says '%s'", line);
}

/* Three threads in read() of the target: one runs the stub, the others are
 * siblings with ia32 frames of their own. */
static void test_threads(void)
{
	char fifo[192], line[256];
	struct h32 h;

	make_scratch();
	make_fifo(fifo, sizeof(fifo), "fifo");
	h = start("threads", fifo);
	msleep(100);
	check_cut(&h, fifo);
	finish(&h, line, sizeof(line));
	CHECK(strcmp(line, "threads 3 go g mask 1 fds 1") == 0, "holder says '%s'", line);
}

/* Stopped anywhere in its loop: every register, x87 and SSE state as it
 * was (the loop checks them after every round). Three cuts in a row, of
 * three files it holds. */
static void test_registers(void)
{
	char line[256], more[3][160];
	unsigned int iters = 0;
	int e = 0, n = 0;
	struct h32 h;

	make_scratch();
	test_make_file(tpath, "r", 0);
	for (int i = 1; i <= 2; i++) {
		snprintf(more[i], sizeof(more[i]), "%s.%d", tpath, i);
		test_make_file(more[i], "r", 0);
	}
	snprintf(more[0], sizeof(more[0]), "%s", tpath);
	h = start("regs", tpath);
	for (int i = 2; i >= 0; i--) {
		msleep(30);
		check_cut(&h, more[i]);
	}
	msleep(30);
	finish(&h, line, sizeof(line));
	CHECK(sscanf(line, "regs OK %u %d %d mask 1 fds 1", &iters, &n, &e) == 3 && n == -1 &&
		  e == EBADF && iters > 0,
	      "holder says '%s'", line);
}

/* ---- kill trials --------------------------------------------------------- */

struct trial_holders {
	char fifo1[192], fifo2[192];
	struct h32 h[5];
};

static void trial_start(struct trial_holders *t, int k)
{
	char name[32];

	snprintf(name, sizeof(name), "fifo1-%d", k);
	make_fifo(t->fifo1, sizeof(t->fifo1), name);
	snprintf(name, sizeof(name), "fifo2-%d", k);
	make_fifo(t->fifo2, sizeof(t->fifo2), name);
	t->h[0] = start("regs", tpath);
	t->h[1] = start("map", tpath);
	t->h[2] = start("hold", tpath);
	t->h[3] = start("read", t->fifo1);
	t->h[4] = start("threads", t->fifo2);
	msleep(50);
}

static const char *revoke_command(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tools/revoke", REVOKE_BUILDDIR);
	return access(path, X_OK) == 0 ? path : "revoke";
}

/* Each holder intact or fully cut; returns a description of the first
 * damage, or NULL. */
static const char *trial_check(struct trial_holders *t, char *why, size_t size)
{
	for (int i = 0; i < 5; i++) {
		struct h32 *h = &t->h[i];
		char line[256], st = 0;
		long tracer = -1;
		int intact = 0, cut = 0;

		/* Detached at once when the tracer dies; a stub left running
		 * finishes within a second. */
		for (int k = 0; k < 200; k++) {
			tracer = proc_status_field(h->pid, "TracerPid");
			st = proc_state(h->pid);
			if (tracer == 0 && st != 't' && st != 'T')
				break;
			msleep(10);
		}
		if (tracer != 0 || st == 't' || st == 'T') {
			snprintf(why, size, "%s holder %d: TracerPid %ld state %c", h->mode,
				 (int)h->pid, tracer, st);
			return why;
		}
		msleep(20);
		if (i >= 3) {
			/* An intact reader still reads its FIFO: feed it. */
			const char *fifo = i == 3 ? t->fifo1 : t->fifo2;
			int w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

			if (w >= 0) {
				ssize_t ignored = write(w, "abc", i == 3 ? 1 : 3);

				(void)ignored;
				close(w);
			}
		}
		finish(h, line, sizeof(line));
		switch (i) {
		case 0: {
			unsigned int it;
			int n, e;

			if (sscanf(line, "regs OK %u %d %d mask 1 fds 1", &it, &n, &e) == 3) {
				intact = n == 1;
				cut = n == -1 && e == EBADF;
			}
			break;
		}
		case 1:
			intact = strcmp(line, "map m mask 1 fds 1") == 0;
			cut = strcmp(line, "map SIGBUS mask 1 fds 1") == 0;
			break;
		case 2:
			intact = strcmp(line, "hold 1 0 go g mask 1 fds 1") == 0;
			cut = strcmp(line, "hold -1 9 go g mask 1 fds 1") == 0;
			break;
		case 3:
			intact = strcmp(line, "read 1 0 mask 1 fds 1") == 0;
			cut = strcmp(line, "read -1 9 mask 1 fds 1") == 0;
			break;
		case 4:
			intact = strcmp(line, "threads 0 go g mask 1 fds 1") == 0;
			cut = strcmp(line, "threads 3 go g mask 1 fds 1") == 0;
			break;
		}
		if (!intact && !cut) {
			snprintf(why, size, "%s holder %d says '%s'", h->mode, (int)h->pid, line);
			return why;
		}
	}
	return NULL;
}

/* One trial: the command on all five holders' files, killed by FAULT (a
 * REVOKE_FAULT point) or DELAY_US after its start. 1 if it died, 0 if it
 * finished first. */
static int trial(int k, const char *fault, unsigned int delay_us, char *why, size_t size)
{
	struct trial_holders t;
	const char *damage;
	int status;
	pid_t pid;

	trial_start(&t, k);
	pid = test_fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		if (fault)
			setenv("REVOKE_FAULT", fault, 1);
		/* Default discovery: BPF where it works (/proc cannot inspect
		 * every pid 1 a host may have; the guest's can). */
		execlp(revoke_command(), "revoke", "--engine", "ptrace", "--timeout", "20", tpath,
		       t.fifo1, t.fifo2, (char *)NULL);
		_exit(127);
	}
	if (!fault) {
		usleep(delay_us);
		kill(pid, SIGKILL);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 127), "cannot run %s",
	      revoke_command());
	damage = trial_check(&t, why, size);
	CHECK(!damage, "trial %d (%s%s, delay %u us): %s", k, fault ? "REVOKE_FAULT=" : "SIGKILL",
	      fault ? fault : "", delay_us, damage);
	for (int i = 0; i < 4; i++) {
		char p[256];

		snprintf(p, sizeof(p), "%s/fifo%d-%d", tdir, 1 + i % 2, k);
		unlink(p);
	}
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void test_kill_faults(void)
{
	static const char *points[] = {
	    "prepared", "siblings-entered", "entered",		 "running",
	    "stopped",	"cure-mask",	    "sibling-cure-mask", "cured"};
	char why[512];
	int died = 0;

	make_scratch();
	test_make_file(tpath, "m", 4096);
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		died += trial((int)i, points[i], 0, why, sizeof(why));
	/* The points are on every run's way: most must have been reached. */
	CHECK(died >= 6, "only %d of 8 fault points were reached", died);
}

static void test_kill_delays(void)
{
	char why[512];

	make_scratch();
	test_make_file(tpath, "m", 4096);
	for (int i = 0; i < 8; i++)
		trial(100 + i, NULL, 5000u + 25000u * (unsigned int)i, why, sizeof(why));
}

/* Bounds for QEMU's TCG on a loaded host (kernel/run-ia32); here they
 * take a second or two. */
TEST_MAIN("revoke-ia32", {"read_fifo", test_read_fifo, 120}, {"hold", test_hold, 120},
	  {"map_sigbus", test_map_sigbus, 120}, {"threads", test_threads, 120},
	  {"registers", test_registers, 120}, {"kill_faults", test_kill_faults, 600},
	  {"kill_delays", test_kill_delays, 600})
