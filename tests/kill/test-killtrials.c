/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kill trials: the revoke command is killed in the middle of a revocation,
 * and no holder may be the worse for it.
 *
 * Each trial forks a fresh set of holders (children of this test, with
 * PR_SET_PDEATHSIG) of several shapes, all holding the target file FILE (two
 * descriptors, and mappings for the mappers) and, for the FIFO readers, the
 * target FIFO; runs `tools/revoke --timeout T FILE FIFO`; sends it a signal
 * at a chosen delay; then checks every holder:
 *
 *   - the command is gone: SIGKILL kills it at once; SIGTERM, SIGINT, SIGHUP,
 *     SIGPIPE must make it finish or roll back within --timeout and exit by
 *     re-raising the signal (so the status says "killed by signal N");
 *   - within a grace of 2 s every holder thread is neither stopped (unless it
 *     is the SIGSTOPped holder, which must still be T) nor traced;
 *   - every thread's signal mask (SigBlk) is what it was;
 *   - the descriptor table has the same numbers; a descriptor that was not a
 *     target is the same file; the target descriptors are all still the
 *     targets or all dead (allocated, no longer a target): never half;
 *   - every mapping of FILE is there with the same range, all intact or all
 *     replaced;
 *   - the holders' own checks (registers after a spin, FIFO read() results,
 *     nanosleep never early nor EINTR, a mapping access gives the byte or
 *     SIGBUS to a handler) found nothing; every thread makes progress (the
 *     FIFO readers once bytes are written; the stopped holder once continued);
 *     asked to, every holder exits with status 0;
 *   - after SIGTERM/SIGINT/SIGHUP/SIGPIPE: all holders cut, or none; if all
 *     were cut, the command printed its report before it re-raised.
 *
 * A third of the delays are spread over [0, D], D the duration of a full run
 * measured first; the others over [0, W] from the moment the test sees a
 * holder traced, W how long a watched run took from then to its end (one
 * trial per slice, at a seeded point in it). A trial is conclusive only when
 * the signal landed during the revocation: a holder was traced when it went,
 * or the holders show a cut broken off. A case passes only with no damaged
 * holder, a quarter of its trials conclusive and one at least once the cut
 * had begun; while it is inconclusive (and undamaged), extra trials run.
 * kill.calibration checks that a full run cuts everyone and damages nobody
 * and that --list touches nobody; kill.selfcheck that a dying tracer which
 * blocks every signal and changes a register is caught in every shape.
 *
 * One line per (signal, shape): kill.sigkill_fifo, ... and kill.SIG_command
 * for the command's own promises. Defaults fit CI (under a minute); --long is
 * the soak (200 holders, 60 trials per signal). --help lists the knobs.
 */
#include <getopt.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/user.h>

#include "killtrials-checks.h"

#ifndef REVOKE_BUILDDIR
#error "REVOKE_BUILDDIR must be defined by the build"
#endif

/* ---- options ------------------------------------------------------------------ */

static const int all_signals[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGPIPE};
#define NSIGS (int)(sizeof(all_signals) / sizeof(all_signals[0]))

static struct {
	int holders;
	int trials[NSIGS];
	bool want[NSIGS];
	double timeout_s;
	double budget_s;
	uint64_t seed;
	int min_conclusive_pct;
	bool verbose;
} opt = {
    .holders = 48,
    .trials = {16, 8, 8, 8, 8},
    .want = {true, true, true, true, true},
    .timeout_s = 3,
    .budget_s = 45,
    .seed = 1,
    .min_conclusive_pct = 25,
};

/* ---- one run of the command ------------------------------------------------------ */

enum when { W_DURING, W_BEFORE, W_AFTER };

struct run {
	int sig;	   /* 0: let it finish */
	bool list_only;	   /* --list: the control run */
	bool watch;	   /* note when the first holder is traced; the delay counts from then */
	bool sabotage;	   /* not the command: a tracer that damages every holder, then dies */
	uint64_t delay_ns; /* from fork to the signal */
	/* results */
	uint64_t duration_ns, kill_ns, first_traced_ns, released_ns;
	int cmd_status;
	bool cmd_timed_out;
	bool printed; /* the command wrote something */
	bool exited_before_kill;
	int traced_at_kill;
	enum when when;
	int ncut, nintact, nhalf, ndamaged;
	char cmd_problem[400];
};

static pid_t start_command(bool list_only)
{
	char timeout[32];
	pid_t pid;

	snprintf(timeout, sizeof(timeout), "%g", opt.timeout_s);
	pid = test_fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		sigset_t none;
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* An ignored signal stays ignored across exec (a test started in
		 * the background by a shell ignores SIGINT; nohup, SIGHUP): the
		 * command must meet every signal with its own disposition. */
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		close_range(3, ~0U, 0);
		if (list_only)
			execl(REVOKE_BUILDDIR "/tools/revoke", "revoke", "--list", "--timeout",
			      timeout, file_path, fifo_path, (char *)NULL);
		else
			execl(REVOKE_BUILDDIR "/tools/revoke", "revoke", "--timeout", timeout,
			      file_path, fifo_path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * The self-check's stand-in for the command: a tracer that stops every holder
 * thread, blocks all its signals and flips a bit of rbx (which the register
 * workloads check, in a spin as across a system call), then exits without
 * detaching, as a killed command would. The checks must catch every shape.
 */
static pid_t start_saboteur(void)
{
	pid_t pid;

	pid = test_fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0)
		return pid;
	for (int h = 0; h < nholders; h++)
		for (int i = 0; i < kinds[holders[h].kind].n; i++) {
			const struct slot *s = &sh->slot[h][i];
			uint64_t all = ~0ULL;
			struct user_regs_struct regs;
			int st;

			if (ptrace(PTRACE_SEIZE, s->tid, 0, 0) < 0 ||
			    ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 ||
			    waitpid(s->tid, &st, __WALL) != s->tid)
				_exit(1);
			if (ptrace(PTRACE_SETSIGMASK, s->tid, sizeof(all), &all) < 0)
				_exit(2);
			if (s->work == W_COMPUTE) {
				if (ptrace(PTRACE_GETREGS, s->tid, 0, &regs) < 0)
					_exit(3);
				regs.rbx ^= 1;
				if (ptrace(PTRACE_SETREGS, s->tid, 0, &regs) < 0)
					_exit(4);
			}
		}
	_exit(0);
}

static void command_output(char *buf, size_t size)
{
	ssize_t n = read_text(out_path, buf, size);
	char *nl;

	if (n <= 0) {
		snprintf(buf, size, "(no output)");
		return;
	}
	/* The last lines say why; keep them on one line. */
	if ((size_t)n > 300)
		memmove(buf, buf + n - 300, 301);
	while ((nl = strchr(buf, '\n')))
		*nl = '|';
}

/* Polls until a holder is traced: how long after T0 that was seen, or 0 when
 * the command CMD exited first. (The polling costs the command some CPU.) */
static uint64_t watch_first_stop(pid_t cmd, uint64_t t0)
{
	for (;;) {
		siginfo_t si = {0};

		if (waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == cmd)
			return 0;
		if (count_traced(true))
			return now_ns() - t0;
		sleep_ns(200000);
	}
}

/* After the first stop: polls until no holder is traced (seen twice, 1 ms
 * apart), how long after T0 that was, or 0 when the command CMD exited
 * first. A signal after that finds every holder released (W_AFTER), though
 * the command may take a while yet to print and exit (an ASan build checks
 * for leaks then): the window where signals land ends here, not at its exit. */
static uint64_t watch_last_release(pid_t cmd, uint64_t t0)
{
	int quiet = 0;

	for (;;) {
		siginfo_t si = {0};
		uint64_t now = now_ns();

		if (waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == cmd)
			return 0;
		if (count_traced(true) == 0) {
			if (++quiet == 2)
				return now - t0;
			sleep_ns(1000000);
			continue;
		}
		quiet = 0;
		sleep_ns(200000);
	}
}

/* Runs the command once against fresh holders and checks them. */
static void run_once(struct run *r)
{
	uint64_t t0, end;
	pid_t cmd;
	int st = 0;

	make_fifo();
	spawn_holders(opt.holders);
	if (!holders_ready(now_ns() + 10 * 1000000000ULL))
		die("the holders did not start within 10 s");
	/* The stopped holder: SIGSTOP, and wait until the group stop is complete. */
	{
		struct holder *x = &holders[nholders - 1];
		uint64_t deadline = now_ns() + GRACE_NS;

		kill(x->pid, SIGSTOP);
		for (int i = 0; i < kinds[K_STOPPED].n; i++)
			while (task_state(x->pid, sh->slot[nholders - 1][i].tid) != 'T')
				if (now_ns() > deadline)
					die("holder %d did not stop after SIGSTOP", x->pid);
				else
					sleep_ns(1000000);
	}
	snapshot();

	t0 = now_ns();
	cmd = r->sabotage ? start_saboteur() : start_command(r->list_only);
	if (r->sig) {
		struct timespec ts;
		siginfo_t si = {0};
		uint64_t at = t0 + r->delay_ns;

		if (r->watch) {
			/* DELAY counts from the first stop seen. */
			uint64_t first = watch_first_stop(cmd, t0);

			at = first ? t0 + first + r->delay_ns : 0;
			r->first_traced_ns = first;
		}
		ts.tv_sec = (time_t)(at / 1000000000ULL);
		ts.tv_nsec = (long)(at % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		r->exited_before_kill =
		    waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == cmd;
		r->traced_at_kill = count_traced(false);
		kill(cmd, r->sig);
		r->kill_ns = now_ns() - t0;
	} else if (r->watch) {
		r->first_traced_ns = watch_first_stop(cmd, t0);
		if (r->first_traced_ns)
			r->released_ns = watch_last_release(cmd, t0);
	}
	/* The command must be gone within its timeout (+2 s) of the signal. */
	end = now_ns() + (uint64_t)(opt.timeout_s * 1e9) + GRACE_NS;
	for (;;) {
		pid_t w = waitpid(cmd, &st, WNOHANG);

		if (w == cmd)
			break;
		if (now_ns() > end) {
			r->cmd_timed_out = true;
			kill(cmd, SIGKILL);
			waitpid(cmd, &st, 0);
			break;
		}
		sleep_ns(200000);
	}
	r->duration_ns = now_ns() - t0;
	r->cmd_status = st;
	{
		struct stat o;

		r->printed = stat(out_path, &o) == 0 && o.st_size > 0;
	}

	wait_released();
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];

		if (reap(x, false)) {
			char s[64];

			test_describe_status(x->wstatus, s, sizeof(s));
			damage(x, D_DEATH, "pid %d (%s) died: %s", x->pid, kind_name[x->kind], s);
			continue;
		}
		check_threads(x);
		/* The SIGSTOPped holder is judged once it is continued: stopped
		 * again in the middle of its cut (the kernel reinstates the
		 * group-stop when the tracer dies), it finishes the cut and goes
		 * home only when it runs. */
		if (x->kind == K_STOPPED)
			continue;
		check_fds(x);
		check_maps(x, h);
	}
	fifo_round();
	check_progress(false);
	{
		struct holder *x = &holders[nholders - 1];

		if (!x->reaped) {
			kill(x->pid, SIGCONT);
			check_progress(true);
			check_sigblk(x);
			check_fds(x);
			check_maps(x, nholders - 1);
		}
	}
	for (int h = 0; h < nholders; h++)
		check_own(&holders[h], h);
	finish_holders();

	r->ncut = r->nintact = r->nhalf = r->ndamaged = 0;
	for (int h = 0; h < nholders; h++) {
		struct holder *x = &holders[h];
		bool cut = x->fds_dead || x->maps_replaced;
		bool intact = x->fds_target || x->maps_intact;

		if (cut && intact)
			r->nhalf++;
		else if (cut)
			r->ncut++;
		else if (intact)
			r->nintact++;
		if (x->damaged)
			r->ndamaged++;
	}
	/* During: a holder was traced when the signal went, or the holders
	 * show that the command was cut short (some cut and some not, half
	 * cut, damaged). After: the command had exited, or (nothing traced,
	 * every holder cut, none damaged) it had released everyone and was
	 * printing its report. Before: nothing traced, nothing touched. */
	if (!r->sig)
		r->when = W_DURING;
	else if (r->exited_before_kill || WIFEXITED(r->cmd_status))
		r->when = W_AFTER;
	else if (r->traced_at_kill || r->nhalf || r->ndamaged || (r->ncut && r->nintact))
		r->when = W_DURING;
	else if (r->ncut)
		r->when = W_AFTER;
	else
		r->when = W_BEFORE;
}

/* ---- the cases ---------------------------------------------------------------------- */

struct tally {
	int planned; /* the trials the case was given; extra ones do not raise the bar */
	int trials, during, cutting, before, after, damaging;
	int damaged[NKINDS];
	char example[NKINDS][400];
	int tags[NTAGS]; /* holders damaged, by kind of damage */
	int cmd_bad;
	char cmd_example[400];
};

static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 16 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static const char *signame(int sig)
{
	static char buf[16];
	const char *a = sigabbrev_np(sig);

	snprintf(buf, sizeof(buf), "sig%s", a ? a : "?");
	for (char *p = buf; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return buf;
}

static void when_text(const struct run *r, char *buf, size_t size)
{
	if (r->watch)
		snprintf(buf, size, "signal %.1f ms after the first stop seen, at %.1f ms",
			 (double)r->delay_ns / 1e6, (double)r->kill_ns / 1e6);
	else
		snprintf(buf, size, "signal at %.1f ms", (double)r->kill_ns / 1e6);
}

static void record_trial(struct tally *t, const struct run *r, int number, uint64_t took)
{
	bool kind_hit[NKINDS] = {false};
	int tags[NTAGS] = {0};
	char cmd[400] = "", st[64], when[96], what[300] = "";

	t->trials++;
	if (r->when == W_DURING)
		t->during++;
	else if (r->when == W_BEFORE)
		t->before++;
	else
		t->after++;
	/* Killed once the cut had begun: some holder cut, half cut or damaged. */
	if (r->when == W_DURING && (r->ncut || r->nhalf || r->ndamaged))
		t->cutting++;
	when_text(r, when, sizeof(when));
	test_describe_status(r->cmd_status, st, sizeof(st));
	for (int h = 0; h < nholders; h++) {
		const struct holder *x = &holders[h];

		if (!x->damaged)
			continue;
		for (int g = 0; g < NTAGS; g++)
			if (x->tags & (1u << g))
				tags[g]++;
		if (!kind_hit[x->kind]) {
			kind_hit[x->kind] = true;
			t->damaged[x->kind]++;
			if (!t->example[x->kind][0])
				append(t->example[x->kind], sizeof(t->example[x->kind]),
				       "first in trial %d (%s): %.300s", number, when, x->damage);
		}
		if (opt.verbose)
			printf("  %s trial %d: %s: %s\n", signame(r->sig), number,
			       kind_name[x->kind], x->damage);
	}
	if (r->ndamaged)
		t->damaging++;
	for (int g = 0; g < NTAGS; g++)
		if (tags[g]) {
			t->tags[g] += tags[g];
			append(what, sizeof(what), "%s%s %d", what[0] ? ", " : "", tag_name[g],
			       tags[g]);
		}

	/* The command's own promises. */
	if (r->cmd_timed_out)
		append(cmd, sizeof(cmd), "still running %.1f s after %s (--timeout %g): %s",
		       opt.timeout_s + 2, signame(r->sig), opt.timeout_s, st);
	if (r->sig != SIGKILL && r->when != W_AFTER &&
	    !(WIFSIGNALED(r->cmd_status) && WTERMSIG(r->cmd_status) == r->sig))
		append(cmd, sizeof(cmd), "%s%s, expected killed by signal %d", cmd[0] ? "; " : "",
		       st, r->sig);
	if (r->sig != SIGKILL && (r->nhalf || (r->ncut && r->nintact)))
		append(cmd, sizeof(cmd),
		       "%sholders left %d cut, %d untouched, %d half cut (all or none)",
		       cmd[0] ? "; " : "", r->ncut, r->nintact, r->nhalf);
	/* Finished, then re-raised the signal: after printing its report. */
	if (r->sig != SIGKILL && r->when == W_DURING && r->ncut && !r->nintact && !r->nhalf &&
	    WIFSIGNALED(r->cmd_status) && WTERMSIG(r->cmd_status) == r->sig && !r->printed)
		append(cmd, sizeof(cmd), "%scut every holder and ended by %s, but printed nothing",
		       cmd[0] ? "; " : "", signame(r->sig));
	if (cmd[0]) {
		t->cmd_bad++;
		if (!t->cmd_example[0])
			append(t->cmd_example, sizeof(t->cmd_example),
			       "first in trial %d (%s): %.300s", number, when, cmd);
	}
	if (opt.verbose || r->ndamaged || cmd[0])
		printf(
		    "  %s trial %d (%s, %d holders traced then, %s): command %s; holders %d cut, "
		    "%d untouched, %d half; %d damaged%s%s%s%s [%.1f s]\n",
		    signame(r->sig), number, when, r->traced_at_kill,
		    r->when == W_DURING	  ? "during the revocation"
		    : r->when == W_BEFORE ? "before the first stop"
					  : "after the command finished",
		    st, r->ncut, r->nintact, r->nhalf, r->ndamaged, what[0] ? ": " : "", what,
		    cmd[0] ? "; command: " : "", cmd, (double)took / 1e9);
	fflush(stdout);
}

static int need_during(const struct tally *t)
{
	int need = ((t->planned ? t->planned : t->trials) * opt.min_conclusive_pct + 99) / 100;

	return need < 1 ? 1 : need;
}

/* Enough trials landed in the revocation, one at least once the cut had begun. */
static bool conclusive(const struct tally *t)
{
	return t->during >= need_during(t) && t->cutting >= 1;
}

static bool any_damage(const struct tally *t)
{
	for (int k = 0; k < NKINDS; k++)
		if (t->damaged[k])
			return true;
	return t->cmd_bad > 0;
}

static int report(int sig, const struct tally *t, int planned)
{
	int need = need_during(t), failed = 0;
	char landed[300], inconclusive[200] = "", kinds_of_damage[400] = "";

	snprintf(landed, sizeof(landed),
		 "%d trials%s, %d landed during the revocation (%d once the cut had begun), %d "
		 "before it, %d after it",
		 t->trials, t->trials < planned ? " (budget)" : "", t->during, t->cutting,
		 t->before, t->after);
	if (!conclusive(t))
		snprintf(inconclusive, sizeof(inconclusive),
			 "inconclusive: %d of %d trials landed during the revocation (need %d), %d "
			 "once the cut had begun (need 1)",
			 t->during, t->trials, need, t->cutting);
	for (int g = 0; g < NTAGS; g++)
		if (t->tags[g])
			append(kinds_of_damage, sizeof(kinds_of_damage), "%s%s %d",
			       kinds_of_damage[0] ? ", " : "", tag_name[g], t->tags[g]);
	printf("  %s: %s; %d trials damaged holders; damaged holders, by kind of damage: %s\n",
	       signame(sig), landed, t->damaging, kinds_of_damage[0] ? kinds_of_damage : "none");
	for (int k = 0; k < NKINDS; k++) {
		if (t->damaged[k]) {
			printf("FAIL kill.%s_%s: %d/%d trials damaged %s holders; %s\n",
			       signame(sig), kind_name[k], t->damaged[k], t->trials, kind_name[k],
			       t->example[k]);
			failed++;
		} else if (inconclusive[0]) {
			printf("FAIL kill.%s_%s: %s; no damage seen\n", signame(sig), kind_name[k],
			       inconclusive);
			failed++;
		} else {
			printf("PASS kill.%s_%s: no %s holder damaged in %s\n", signame(sig),
			       kind_name[k], kind_name[k], landed);
		}
	}
	if (t->cmd_bad) {
		printf("FAIL kill.%s_command: %d/%d trials: %s\n", signame(sig), t->cmd_bad,
		       t->trials, t->cmd_example);
		failed++;
	} else if (inconclusive[0]) {
		printf("FAIL kill.%s_command: %s\n", signame(sig), inconclusive);
		failed++;
	} else {
		printf("PASS kill.%s_command: %s in %s\n", signame(sig),
		       sig == SIGKILL
			   ? "the command died"
			   : "the command exited by the signal within its timeout, holders "
			     "all cut or all untouched,",
		       landed);
	}
	fflush(stdout);
	return failed;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* A full run must cut every holder and damage none; a --list run must touch
 * none. Three full runs give the median duration *RET_DURATION; three
 * watched ones (polling for the first stop, as half the trials do) give
 * *RET_WINDOW, the median time from the first stop seen to the last release. */
static int calibrate(uint64_t *ret_duration, uint64_t *ret_window)
{
	uint64_t d[3], w[3];
	char out[400], st[64];
	int failed = 0;

	for (int i = 0; i < 7; i++) {
		struct run r = {.list_only = i == 0, .watch = i >= 4};

		run_once(&r);
		test_describe_status(r.cmd_status, st, sizeof(st));
		command_output(out, sizeof(out));
		if (!WIFEXITED(r.cmd_status) || WEXITSTATUS(r.cmd_status) != 0 || r.ndamaged ||
		    (r.list_only ? r.nintact != nholders : r.ncut != nholders)) {
			printf("FAIL kill.calibration: %s run: command %s, %d of %d holders cut, "
			       "%d untouched, %d half, %d damaged; output: %s\n",
			       r.list_only ? "--list" : "full", st, r.ncut, nholders, r.nintact,
			       r.nhalf, r.ndamaged, out);
			for (int h = 0; h < nholders; h++)
				if (holders[h].damaged)
					printf("  %s\n", holders[h].damage);
			failed++;
		}
		if (i >= 1 && i <= 3)
			d[i - 1] = r.duration_ns;
		if (i >= 4)
			w[i - 4] = !r.first_traced_ns ? 0
				   : r.released_ns    ? r.released_ns - r.first_traced_ns
						      : r.duration_ns - r.first_traced_ns;
	}
	*ret_duration = median3(d[0], d[1], d[2]);
	*ret_window = median3(w[0], w[1], w[2]);
	if (!failed)
		printf("PASS kill.calibration: %d holders: --list touched none; 6 full runs cut "
		       "all, damaged none (%.1f, %.1f, %.1f ms; from the first stop seen to the "
		       "last release %.1f, %.1f, %.1f ms)\n",
		       nholders, (double)d[0] / 1e6, (double)d[1] / 1e6, (double)d[2] / 1e6,
		       (double)w[0] / 1e6, (double)w[1] / 1e6, (double)w[2] / 1e6);
	fflush(stdout);
	return failed;
}

/* The checks themselves: a dying tracer that blocks every signal of every
 * holder thread and changes a register must be caught in every shape. */
static int selfcheck(void)
{
	struct run r = {.sabotage = true};
	bool hit[NKINDS] = {false};
	char missed[200] = "";

	run_once(&r);
	for (int h = 0; h < nholders; h++)
		if ((holders[h].tags & (1u << D_SIGBLK)) &&
		    (holders[h].kind == K_FIFO || holders[h].kind == K_SLEEP ||
		     holders[h].kind == K_MMAP || holders[h].kind == K_SIGMASK ||
		     (holders[h].tags & (1u << D_REGS))))
			hit[holders[h].kind] = true;
	for (int k = 0; k < NKINDS; k++)
		if (!hit[k])
			append(missed, sizeof(missed), "%s%s", missed[0] ? ", " : "", kind_name[k]);
	if (missed[0] || !WIFEXITED(r.cmd_status) || WEXITSTATUS(r.cmd_status) != 0) {
		char st[64];

		test_describe_status(r.cmd_status, st, sizeof(st));
		printf("FAIL kill.selfcheck: a dying tracer that blocked every signal and changed "
		       "rbx went unnoticed in: %s (saboteur %s)\n",
		       missed[0] ? missed : "-", st);
		return 1;
	}
	printf("PASS kill.selfcheck: a dying tracer that blocked every signal and changed rbx is "
	       "caught in every shape (%d of %d holders damaged)\n",
	       r.ndamaged, nholders);
	return 0;
}

static void usage(void)
{
	printf(
	    "usage: test-killtrials [--long] [--holders N] [--trials N | --trials SIG=N,...]\n"
	    "                       [--signals kill,term,int,hup,pipe] [--timeout S] [--budget S]\n"
	    "                       [--seed N] [--min-conclusive PCT] [--verbose]\n"
	    "defaults (CI): 48 holders, 16 SIGKILL trials and 8 for each other signal,\n"
	    "--timeout 3, a budget of 45 s of trials (fewer trials when they would not fit).\n"
	    "--long: 200 holders, 60 trials per signal, no budget (10-20 minutes).\n"
	    "The environment variable REVOKE_KILLTRIALS adds options (e.g. \"--long\").\n");
}

static int sig_index(const char *name)
{
	static const char *const names[NSIGS] = {"kill", "term", "int", "hup", "pipe"};

	if (strncasecmp(name, "sig", 3) == 0)
		name += 3;
	for (int i = 0; i < NSIGS; i++)
		if (strcasecmp(name, names[i]) == 0)
			return i;
	return -1;
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"long", no_argument, NULL, 'L'},
	    {"holders", required_argument, NULL, 'n'},
	    {"trials", required_argument, NULL, 't'},
	    {"signals", required_argument, NULL, 's'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"budget", required_argument, NULL, 'b'},
	    {"seed", required_argument, NULL, 'S'},
	    {"min-conclusive", required_argument, NULL, 'm'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'L':
			opt.holders = 200;
			for (int i = 0; i < NSIGS; i++)
				opt.trials[i] = 60;
			opt.budget_s = 0;
			break;
		case 'n':
			opt.holders = atoi(optarg);
			if (opt.holders < NKINDS || opt.holders > MAX_HOLDERS)
				die("--holders: %d to %d", NKINDS, MAX_HOLDERS);
			break;
		case 't':
			if (strchr(optarg, '=')) {
				char *copy = strdup(optarg), *tok, *save = NULL;

				for (tok = strtok_r(copy, ",", &save); tok;
				     tok = strtok_r(NULL, ",", &save)) {
					char *eq = strchr(tok, '=');
					int i;

					if (!eq)
						die("--trials: SIG=N,...");
					*eq = '\0';
					i = sig_index(tok);
					if (i < 0)
						die("--trials: unknown signal %s", tok);
					opt.trials[i] = atoi(eq + 1);
				}
				free(copy);
			} else {
				for (int i = 0; i < NSIGS; i++)
					opt.trials[i] = atoi(optarg);
			}
			break;
		case 's': {
			char *copy = strdup(optarg), *tok, *save = NULL;

			for (int i = 0; i < NSIGS; i++)
				opt.want[i] = false;
			for (tok = strtok_r(copy, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int i = sig_index(tok);

				if (i < 0)
					die("--signals: unknown signal %s", tok);
				opt.want[i] = true;
			}
			free(copy);
			break;
		}
		case 'T':
			opt.timeout_s = atof(optarg);
			break;
		case 'b':
			opt.budget_s = atof(optarg);
			break;
		case 'S':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			opt.min_conclusive_pct = atoi(optarg);
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			usage();
			exit(2);
		}
	}
}

static int driver(void)
{
	uint64_t duration, window = 0;
	uint64_t rng = opt.seed;
	int failed = 0, total = 0, number = 0;

	make_files();
	if (calibrate(&duration, &window) + selfcheck()) {
		remove_files();
		return 1;
	}
	for (int i = 0; i < NSIGS; i++)
		if (opt.want[i])
			total += opt.trials[i];
	printf("  %d holders; a third of the trials spread over [0, %.1f ms] from the start, the "
	       "others over [0, %.1f ms] from the first stop seen; seed %" PRIu64
	       ", --timeout %g\n",
	       opt.holders, (double)duration / 1e6, (double)window / 1e6, opt.seed, opt.timeout_s);
	if (opt.budget_s > 0)
		printf("  budget: %.0f s for %d trials, shared by the signals in proportion\n",
		       opt.budget_s, total);
	fflush(stdout);

	for (int i = 0; i < NSIGS; i++) {
		struct tally t;
		int n = opt.trials[i];
		uint64_t t_sig = now_ns();
		double share = total ? opt.budget_s * 1e9 * n / total : 0;

		if (!opt.want[i] || n <= 0)
			continue;
		memset(&t, 0, sizeof(t));
		t.planned = n;
		for (int k = 0; k < 2 * n; k++) {
			/* A third of the trials: one per slice of [0, D] from the
			 * start of the command; the others one per slice of [0, W]
			 * from the moment a holder is seen traced (W: from then to
			 * the end in the watched calibration runs), where the damage
			 * can happen. Each at a seeded point in its slice. When the
			 * planned N left the case inconclusive (and undamaged), up to
			 * N more from the first stop on, at new points. */
			double u = (double)(busy_mix(&rng) >> 11) / (double)(1ULL << 53);
			bool timed = k < n && k % 3 == 0;
			int ntimed = (n + 2) / 3, slice, slices;
			struct run r = {.sig = all_signals[i], .watch = !timed};
			uint64_t t_trial = now_ns();

			if (timed) {
				slice = k / 3;
				slices = ntimed;
			} else if (k < n) {
				slice = k - k / 3 - 1;
				slices = n - ntimed;
			} else {
				slice = k - n;
				slices = n;
			}
			r.delay_ns = (uint64_t)((double)(timed ? duration : window) * (slice + u) /
						(slices ? slices : 1));
			if (k >= n && (conclusive(&t) || any_damage(&t)))
				break;
			/* The budget bounds the run (damaged holders make a trial
			 * slower: its checks wait out their grace). */
			if (opt.budget_s > 0 && k >= 2 &&
			    (double)(t_trial - t_sig) > (k < n ? share : 1.5 * share))
				break;
			run_once(&r);
			record_trial(&t, &r, ++number, now_ns() - t_trial);
		}
		failed += report(all_signals[i], &t, n);
	}
	remove_files();
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("REVOKE_KILLTRIALS");
	struct rlimit rl;
	pid_t pid;
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (env && *env) {
		char *copy = strdup(env), *args[32] = {argv[0]}, *save = NULL;
		int n = 1;

		for (char *tok = strtok_r(copy, " ", &save); tok && n < 31;
		     tok = strtok_r(NULL, " ", &save))
			args[n++] = tok;
		parse_options(n, args);
	}
	parse_options(argc, argv);

	if (geteuid() != 0) {
		printf("SKIP kill.trials: needs root (the command must be able to stop every "
		       "holder)\n");
		return 0;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	have_avx = busy_have_avx();
	pace = opt.holders > 48 ? (uint64_t)(opt.holders + 47) / 48 : 1;
	holders = calloc(MAX_HOLDERS, sizeof(*holders));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!holders || sh == MAP_FAILED)
		die("no memory");

	/* The driver runs in a process group of its own; whatever it leaves
	 * behind (it should leave nothing) dies with it. */
	pid = test_fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		_exit(driver());
	}
	setpgid(pid, pid);
	{
		siginfo_t si;

		/* Unreaped until its group is killed, so the group id is not reused. */
		while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st)) {
		char s[64];

		test_describe_status(st, s, sizeof(s));
		printf("FAIL kill.driver: %s\n", s);
		return 1;
	}
	return WEXITSTATUS(st);
}
