/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The messages on standard error: each names the path or the process and
 * the reason. One per holder that could not be stopped or whose reference
 * could not be cut, then one verdict per path; processes that could not be
 * inspected are counted per path (the table and the JSON list them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"

int stdout_errno;
bool stdout_closed;

void flush_stdout(void)
{
	if (!stdout_closed && fflush(stdout) != 0 && stdout_errno == 0)
		stdout_errno = errno ? errno : EIO;
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	flush_stdout(); /* keep the table and the messages in order on a terminal */
	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A path as a message names it: a path of 70,000 bytes is shown by its
 * beginning and its end (several may be in one message: rotating buffers). */
static const char *msg_path(const char *path)
{
	static char bufs[4][224];
	static unsigned int next;
	size_t len = strlen(path);
	char *b;

	if (len <= 200)
		return path;
	b = bufs[next++ % 4];
	memcpy(b, path, 100);
	memcpy(b + 100, "...", 3);
	memcpy(b + 103, path + len - 80, 81);
	return b;
}

static const char *msg_target(const struct revoke_report *rep, size_t t)
{
	return msg_path(target_path(rep, t));
}

/* What a dead descriptor's link says: the memfd an earlier userspace revoke
 * put in its place (lib/cut/). */
#define DEAD_LINK "/memfd:revoked (deleted)"

static bool is_dead_descriptor(const char *path, bool nofollow)
{
	char link[64], buf[sizeof(DEAD_LINK) + 1];
	int fd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)sizeof(DEAD_LINK) - 1 && memcmp(buf, DEAD_LINK, (size_t)n) == 0;
}

static const char *errno_text(int err, char *buf, size_t size)
{
	if (err == ENOSYS)
		snprintf(buf, size,
			 "%s (the running kernel has no revoke system call, see --engine)",
			 strerror(err));
	else
		snprintf(buf, size, "%s", strerror(err));
	return buf;
}

/* The library's reading of a REVOKE_* switch (lib/public.c). */
static bool env_says(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* An error of the call as a whole, said once rather than once per path. */
static bool report_call_failure(const struct revoke_report *rep, size_t npaths, int err)
{
	/* The selection's own error (its input named). */
	if (rep && REPORT_HAS(rep, failed_detail) &&
	    strncmp(rep->failed_detail, "--cgroup ", 9) == 0 && err != ETIMEDOUT) {
		warnx_("%.*s", (int)sizeof(rep->failed_detail), rep->failed_detail);
		return true;
	}
	if (err == E2BIG)
		warnx_("%zu paths: too many for one request to the helper revoked(8): nothing "
		       "was changed (see revoke(1), LIMITS)",
		       npaths);
	else if (err == EAGAIN)
		warnx_("not revoked: the helper revoked(8) refused, again and again until the "
		       "timeout: too many requests at once");
	return err == E2BIG || err == EAGAIN;
}

void report_lookup_failure(char *const *paths, size_t n, bool nofollow, bool mount, int err)
{
	bool named = false;
	char text[160];
	struct stat st;

	if (report_call_failure(NULL, n, err))
		return;
	/* Looking the paths up again could hang as the library's lookup did. */
	if (err == ETIMEDOUT) {
		for (size_t i = 0; i < n; i++)
			warnx_("%s: %s", msg_path(paths[i]), strerror(err));
		return;
	}
	/* Look each path up again the way the library does to name the culprit. */
	for (size_t i = 0; i < n; i++) {
		int r = nofollow ? lstat(paths[i], &st) : stat(paths[i], &st);

		if (r < 0) {
			warnx_("%s: %s", msg_path(paths[i]), strerror(errno));
			named = true;
		} else if (mount && err == EINVAL) {
			warnx_("%s: not a mount point", msg_path(paths[i]));
			named = true;
		} else if (mount && err == EBUSY) {
			warnx_("%s: refused: the root directory of this process is on it",
			       msg_path(paths[i]));
			named = true;
		} else if (mount && err == EPERM) {
			warnx_("%s: %s (cutting what is on a mount needs CAP_SYS_ADMIN)",
			       msg_path(paths[i]), strerror(err));
			named = true;
		} else if (err == EBADF && is_dead_descriptor(paths[i], nofollow)) {
			warnx_("%s: is a descriptor that an earlier revoke left",
			       msg_path(paths[i]));
			named = true;
		} else if (err == EINVAL && S_ISCHR(st.st_mode)) {
			/* the library's only EINVAL for a device */
			warnx_("%s: refused: a device every process shares (%u:%u)",
			       msg_path(paths[i]), major(st.st_rdev), minor(st.st_rdev));
			named = true;
		} else if (err == ELOOP && nofollow && S_ISLNK(st.st_mode)) {
			warnx_("%s: %s", msg_path(paths[i]), strerror(err));
			named = true;
		} else if (err == EPERM && st.st_uid != geteuid()) {
			warnx_("%s: %s", msg_path(paths[i]), strerror(err));
			named = true;
		}
	}
	if (named)
		return;
	for (size_t i = 0; i < n; i++)
		warnx_("%s: %s", msg_path(paths[i]), errno_text(err, text, sizeof(text)));
}

void report_ns_failure(char *const *paths, size_t n, pid_t pid, int err)
{
	char path[64], text[160];
	int fd;

	/* The paths are another process's: looking them up here means
	 * nothing. What can be said is whether that process is there and
	 * whether we may look into it. */
	if (err == ESRCH) {
		warnx_("--ns %d: no such process", (int)pid);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && err == EPERM) {
		warnx_("--ns %d: %s (looking at its files needs the right to trace it)", (int)pid,
		       strerror(err));
		return;
	}
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < n; i++)
		warnx_("%s (as pid %d sees it): %s", msg_path(paths[i]), (int)pid,
		       errno_text(err, text, sizeof(text)));
}

/* ---- timeouts ---------------------------------------------------------- */

/* What the call was doing, per phase: without a process, and with one
 * ("stopping pid 123", or in parentheses "... (pid 123)"). */
static const struct {
	const char *doing;
	const char *doing_pid;
	bool paren_pid; /* "doing (pid N)" rather than "doing_pid N" */
	bool detail;	/* failed_detail adds to it */
} phases[] = {
    [REVOKE_PHASE_RESOLVE] = {"looking the paths up", NULL, false, true},
    [REVOKE_PHASE_LOCK] = {"waiting for another revoke", NULL, true, false},
    [REVOKE_PHASE_SCAN] = {"finding the holders", NULL, true, true},
    [REVOKE_PHASE_STOP] = {"stopping the holders", "stopping pid", false, true},
    [REVOKE_PHASE_CUT] = {"cutting the references", "cutting in pid", false, true},
    [REVOKE_PHASE_RELEASE] = {"releasing the holders", "releasing pid", false, true},
};

const char *timeout_text(const struct revoke_report *rep, char *buf, size_t size)
{
	int ph = REPORT_HAS(rep, failed_phase) ? rep->failed_phase : 0;
	pid_t pid = REPORT_HAS(rep, failed_pid) ? rep->failed_pid : 0;
	const char *detail = REPORT_HAS(rep, failed_detail) ? rep->failed_detail : "";
	uint64_t bound =
	    REPORT_HAS(rep, timeout_ns) && rep->timeout_ns ? rep->timeout_ns : rep->elapsed_ns;
	size_t n;

	/* A lock's wait says whose, and how long it really waited (its share
	 * of the bound, not the bound). */
	if (ph == REVOKE_PHASE_LOCK && detail[0]) {
		snprintf(buf, size, "timed out waiting %.*s", (int)sizeof(rep->failed_detail),
			 detail);
		return buf;
	}
	n = (size_t)snprintf(buf, size, "timed out after %.1f s", (double)bound / 1e9);
	if (ph <= 0 || (size_t)ph >= ARRAY_SIZE(phases) || !phases[ph].doing || n >= size)
		return buf;
	if (pid > 0 && phases[ph].doing_pid)
		n += (size_t)snprintf(buf + n, size - n, " %s %d", phases[ph].doing_pid, (int)pid);
	else if (pid > 0 && phases[ph].paren_pid)
		n +=
		    (size_t)snprintf(buf + n, size - n, " %s (pid %d)", phases[ph].doing, (int)pid);
	else
		n += (size_t)snprintf(buf + n, size - n, " %s", phases[ph].doing);
	if (phases[ph].detail && detail[0] && n < size)
		snprintf(buf + n, size - n, " (%.*s)", (int)sizeof(rep->failed_detail), detail);
	return buf;
}

/* H is the process the call timed out with. */
static bool holder_timed_out(const struct revoke_report *rep, const struct revoke_holder *h,
			     int err)
{
	if (!REPORT_HAS(rep, failed_pid) || rep->failed_pid != h->pid || !rep->failed_phase)
		return false;
	if (err == ETIMEDOUT || h->error == ETIMEDOUT)
		return true;
	for (size_t k = 0; k < h->nrefs; k++)
		if (revoke_report_ref(rep, h, k)->error == ETIMEDOUT)
			return true;
	return false;
}

/* ---- holders ----------------------------------------------------------- */

static int holder_cmp(const void *a, const void *b)
{
	const struct revoke_holder *x = *(const struct revoke_holder *const *)a;
	const struct revoke_holder *y = *(const struct revoke_holder *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool holds_target(const struct revoke_report *rep, const struct revoke_holder *h, size_t t)
{
	for (size_t k = 0; k < h->nrefs; k++)
		if (revoke_report_ref(rep, h, k)->target == t)
			return true;
	return false;
}

static const char *plural(size_t n, const char *one, const char *more)
{
	return n == 1 ? one : more;
}

static bool ref_said_bad(const struct revoke_ref *r)
{
	return r->state == REVOKE_STATE_FAILED || r->state == REVOKE_STATE_UNREACHABLE;
}

/* Refs K and J of H failed for the same reason, on the same path. */
static bool same_failure(const struct revoke_report *rep, const struct revoke_holder *h, size_t k,
			 size_t j)
{
	const struct revoke_ref *a = revoke_report_ref(rep, h, k),
				*b = revoke_report_ref(rep, h, j);

	return ref_said_bad(a) && ref_said_bad(b) && a->target == b->target &&
	       a->state == b->state && a->error == b->error &&
	       strcmp(ref_error_string(h, a), ref_error_string(h, b)) == 0;
}

/* An earlier ref of H said ref K's failure already. */
static bool said_before(const struct revoke_report *rep, const struct revoke_holder *h, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (same_failure(rep, h, j, k))
			return true;
	return false;
}

/* One message per holder that could not be stopped (per path it holds),
 * and per reference that could not be cut. Returns whether one of them
 * said that the call timed out. */
static bool report_holders(const struct revoke_report *rep, int err)
{
	const struct revoke_holder **order = calloc(rep->nholders + 1, sizeof(*order));
	bool said_timeout = false;
	char tbuf[256];

	if (!order) {
		warnx_("cannot report the holders: %s", strerror(ENOMEM));
		return false;
	}
	for (size_t i = 0; i < rep->nholders; i++)
		order[i] = revoke_report_holder(rep, i);
	qsort(order, rep->nholders, sizeof(*order), holder_cmp);

	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = order[i];
		bool timed_out = holder_timed_out(rep, h, err), any = false;
		char comm[4 * sizeof(h->comm) + 1], what[96];

		if (h->state == REVOKE_STATE_UNINSPECTED)
			continue; /* counted per path */
		comm_safe(h->comm, comm, sizeof(comm));
		if (timed_out)
			timeout_text(rep, tbuf, sizeof(tbuf));
		if (h->error || timed_out) {
			for (size_t t = 0; t < rep->ntargets; t++) {
				if (!holds_target(rep, h, t))
					continue;
				if (timed_out)
					warnx_("%s: %s", msg_target(rep, t), tbuf);
				else
					warnx_("%s: pid %d (%s): not stopped: %s",
					       msg_target(rep, t), (int)h->pid, comm,
					       holder_error_string(h));
				any = true;
			}
			if (!any && timed_out)
				warnx_("pid %d (%s): %s", (int)h->pid, comm, tbuf);
			else if (!any)
				warnx_("pid %d (%s): not stopped: %s", (int)h->pid, comm,
				       holder_error_string(h));
			said_timeout |= timed_out;
			continue;
		}
		for (size_t k = 0; k < h->nrefs; k++) {
			const struct revoke_ref *r = revoke_report_ref(rep, h, k);
			const char *why = ref_error_string(h, r);
			size_t same = 0;

			if (!ref_said_bad(r) || said_before(rep, h, k))
				continue;
			/* One line per reason: a full table of 1000 descriptors
			 * that could not be cut for one reason is one line. */
			for (size_t j = k + 1; j < h->nrefs; j++)
				same += same_failure(rep, h, k, j);
			ref_describe(r, what, sizeof(what));
			if (same)
				warnx_("%s: pid %d (%s): %s and %zu more %s: not cut: %s",
				       msg_target(rep, r->target), (int)h->pid, comm, what, same,
				       plural(same, "reference", "references"),
				       *why ? why : "unknown reason");
			else
				warnx_("%s: pid %d (%s): %s: not cut: %s",
				       msg_target(rep, r->target), (int)h->pid, comm, what,
				       *why ? why : "unknown reason");
		}
	}
	free(order);
	return said_timeout;
}

/* ---- paths ------------------------------------------------------------- */

struct counts {
	size_t total, cut, bad;
	size_t unknown; /* left untouched: not told apart (--description, --recheck) */
};

static struct counts count_refs(const struct revoke_report *rep, size_t t)
{
	struct counts c = {0};

	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		for (size_t k = 0; k < h->nrefs; k++) {
			const struct revoke_ref *r = revoke_report_ref(rep, h, k);

			if (r->target != t)
				continue;
			c.total++;
			c.cut += r->state == REVOKE_STATE_CUT;
			c.unknown += r->state == REVOKE_STATE_UNKNOWN;
			c.bad += ref_not_cut(h, r);
		}
	}
	return c;
}

/* The verdict on one path. ANY_BAD: some path has references not cut. */
static void report_path(const struct cli *cli, const struct revoke_report *rep, int err,
			const char *path, struct counts c, size_t uninspected, bool said_timeout,
			bool any_bad)
{
	bool unmounted = REPORT_HAS(rep, nunmounted) && rep->nunmounted;
	const char *verdict = cli->list	  ? ""
			      : unmounted ? "unmounted, but "
			      : cli->umount
				  ? (c.cut ? "cut in part, not unmounted: " : "not unmounted: ")
			      : c.cut ? "partly revoked: "
				      : "not revoked: ";
	/* Not cut, for reasons the messages about holders gave. */
	bool busy = err == EBUSY || (err == ETIMEDOUT && said_timeout);

	path = msg_path(path);
	bool uninspected_said = false;
	char text[256];

	if (err == ETIMEDOUT && !said_timeout) {
		warnx_("%s: %s%s", path, verdict, timeout_text(rep, text, sizeof(text)));
	} else if (busy && cli->list && uninspected) {
		warnx_("%s: incomplete listing: %zu %s could not be inspected and may hold it (see "
		       "--best-effort)",
		       path, uninspected, plural(uninspected, "process", "processes"));
		uninspected_said = true;
	} else if (busy && !cli->list && c.bad) {
		if (cli->best_effort)
			warnx_("%s: %s%zu of %zu references could not be cut", path, verdict, c.bad,
			       c.total);
		else
			warnx_("%s: %s%zu %s could not be cut (see --best-effort)", path, verdict,
			       c.bad, plural(c.bad, "reference", "references"));
	} else if (busy && !cli->list && !cli->best_effort && uninspected) {
		warnx_("%s: not revoked: %zu %s could not be inspected and may hold it (see "
		       "--best-effort)",
		       path, uninspected, plural(uninspected, "process", "processes"));
		uninspected_said = true;
	} else if (busy && !cli->list && any_bad) {
		if (!cli->best_effort) /* with it, this path was cut */
			warnx_("%s: not revoked: nothing was changed (another path could not be "
			       "revoked)",
			       path);
	} else if (err && !(busy && uninspected && cli->best_effort)) {
		/* No holder to blame (e.g. they kept forking): the error itself. */
		warnx_("%s: %s%s", path, verdict, errno_text(err, text, sizeof(text)));
	}
	if (uninspected && !uninspected_said)
		warnx_("%s: %zu %s could not be inspected and may hold it", path, uninspected,
		       plural(uninspected, "process", "processes"));
	if (c.unknown)
		warnx_("%s: %zu %s left untouched: discovery cannot tell %s", path, c.unknown,
		       plural(c.unknown, "reference", "references"),
		       "which description made a mapping or fills an io_uring slot");
}

/* --umount: the verdict on the mounts as a whole. Returns whether it said
 * everything there is to say. */
static bool report_umount(const struct cli *cli, const struct revoke_report *rep, int err)
{
	int ph = REPORT_HAS(rep, failed_phase) ? rep->failed_phase : 0;
	size_t done = REPORT_HAS(rep, nunmounted) ? rep->nunmounted : 0;
	const char *top = msg_target(rep, 0);
	size_t subs = rep->ntargets ? rep->ntargets - 1 : 0;
	char subtext[64] = "";

	/* The mounts beneath it, and copies in other namespaces that go with it. */
	if (subs)
		snprintf(subtext, sizeof(subtext), " with %zu other %s", subs,
			 plural(subs, "mount", "mounts"));
	if (cli->dry_run) {
		size_t refs = 0, bad = 0, uninspected = 0;

		for (size_t i = 0; i < rep->nholders; i++) {
			const struct revoke_holder *h = revoke_report_holder(rep, i);

			uninspected += h->state == REVOKE_STATE_UNINSPECTED;
			for (size_t k = 0; k < h->nrefs; k++) {
				refs++;
				bad +=
				    revoke_report_ref(rep, h, k)->state == REVOKE_STATE_UNREACHABLE;
			}
		}
		if (err == 0)
			warnx_("%s: would unmount%s, cutting %zu %s", top, subtext, refs - bad,
			       plural(refs - bad, "reference", "references"));
		else if (err == EBUSY && bad)
			warnx_("%s: would not unmount: %zu %s cannot be cut", top, bad,
			       plural(bad, "reference", "references"));
		else if (err == EBUSY && uninspected)
			warnx_("%s: would not unmount: %zu %s could not be inspected (see "
			       "--best-effort)",
			       top, uninspected, plural(uninspected, "process", "processes"));
		return err == 0 || err == EBUSY;
	}
	if (ph == REVOKE_PHASE_UMOUNT) {
		size_t cut = 0, refs = 0;

		for (size_t i = 0; i < rep->nholders; i++) {
			const struct revoke_holder *h = revoke_report_holder(rep, i);

			for (size_t k = 0; k < h->nrefs; k++, refs++)
				cut += revoke_report_ref(rep, h, k)->state == REVOKE_STATE_CUT;
		}
		warnx_("%s: %zu of %zu references cut, but unmounting failed: %s (%s)", top, cut,
		       refs, strerror(err ? err : EIO), rep->failed_detail);
		return true;
	}
	if (done && err)
		warnx_("%s: unmounted (%zu of %zu mounts)", top, done, rep->ntargets);
	return false;
}

/* Whether some reference was left untouched, not told apart. */
static bool any_unknown(const struct revoke_report *rep)
{
	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = revoke_report_holder(rep, i);

		for (size_t k = 0; k < h->nrefs; k++)
			if (revoke_report_ref(rep, h, k)->state == REVOKE_STATE_UNKNOWN)
				return true;
	}
	return false;
}

void report_outcome(const struct cli *cli, const struct revoke_report *rep, int err,
		    char *const *paths, size_t npaths)
{
	size_t uninspected = REPORT_HAS(rep, nuninspected) ? rep->nuninspected : 0;
	bool said_timeout = report_holders(rep, err), any_foreign = false, any_bad = false;
	const struct counts none = {0};

	if (cli->umount && report_umount(cli, rep, err))
		return;
	if (report_call_failure(rep, npaths, err))
		return;
	if (err == 0 && uninspected == 0 && !any_unknown(rep))
		return;
	if (rep->ntargets == 0) {
		/* The call gave up before it had looked the paths up. */
		for (size_t i = 0; i < npaths; i++)
			report_path(cli, rep, err, paths[i], none, uninspected, said_timeout,
				    false);
		return;
	}
	for (size_t t = 0; t < rep->ntargets; t++) {
		any_foreign |= rep->targets[t].uid != geteuid();
		any_bad |= count_refs(rep, t).bad > 0;
	}
	for (size_t t = 0; t < rep->ntargets; t++) {
		/* EPERM: name only the files the caller does not own. */
		if (err == EPERM && any_foreign && rep->targets[t].uid == geteuid())
			continue;
		/* Mounts: the verdict is said for the mount named; a mount
		 * beneath it only when some of its references were not cut. */
		if (cli->mount && t > 0 && count_refs(rep, t).bad == 0)
			continue;
		report_path(cli, rep, err, msg_target(rep, t), count_refs(rep, t),
			    cli->mount && t > 0 ? 0 : uninspected, said_timeout, any_bad);
	}
	/* An owner whose file other users' processes may hold: the helper
	 * would have looked at them, and nobody answered on its socket (the
	 * library asked it, or the report would name its pid). */
	if (uninspected && (err == 0 || err == EBUSY) && geteuid() != 0 &&
	    !env_says("REVOKE_NO_HELPER") && !(REPORT_HAS(rep, helper_pid) && rep->helper_pid)) {
		bool owns = false;

		for (size_t t = 0; t < rep->ntargets; t++)
			owns |= rep->targets[t].uid == geteuid();
		if (owns)
			warnx_("%s",
			       "no helper answered: revoked(8) looks at other users' processes "
			       "for a file's owner (systemctl enable --now revoked.socket)");
	}
}
