/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoke - revoke every reference to files, or list their holders.
 * Options, the call into librevoke, the messages and the exit status; the
 * table is in table.c, the JSON document in json.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define EXIT_USAGE    2
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The signals held back during the call, and the mask to go back to. */
static sigset_t held_back;
static bool held;

/* A signal that arrived during the call now takes its course (usually the
 * end of the process, by that signal, as the caller expects). */
static void deliver_held_signals(void)
{
	if (held) {
		held = false;
		sigprocmask(SIG_SETMASK, &held_back, NULL);
	}
}

/* The first write error on stdout, reported once by close_stdout(). */
static int stdout_errno;
static bool stdout_closed;

static void flush_stdout(void)
{
	if (!stdout_closed && fflush(stdout) != 0 && stdout_errno == 0)
		stdout_errno = errno ? errno : EIO;
}

static void __attribute__((format(printf, 1, 2))) warnx_(const char *fmt, ...)
{
	va_list ap;

	flush_stdout(); /* keep the table and the messages in order on a terminal */
	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2), noreturn)) usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", program_invocation_short_name);
	exit(EXIT_USAGE);
}

/* Flush and close stdout; a failed write is an error like any other. */
static int close_stdout(void)
{
	flush_stdout();
	if (ferror(stdout) && stdout_errno == 0)
		stdout_errno = EIO;
	stdout_closed = true;
	if (fclose(stdout) != 0 && stdout_errno == 0)
		stdout_errno = errno ? errno : EIO;
	if (stdout_errno) {
		warnx_("write error: %s", strerror(stdout_errno));
		return -1;
	}
	return 0;
}

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	fprintf(out, "\nUsage:\n %s [options] <path>...\n", program_invocation_short_name);
	fputs("\nRevoke every open descriptor and memory mapping of the files, in every process,\n"
	      "or list who holds them.\n",
	      out);
	fputs("\nOptions:\n"
	      " -l, --list                list the holders, change nothing\n"
	      " -b, --best-effort         cut what can be cut, report the rest\n"
	      " -t, --timeout <seconds>   bound on the whole operation (default 5)\n"
	      "     --no-follow           do not follow a symbolic link in the last component\n"
	      "     --no-hangup           do not hang up terminals\n"
	      "     --engine <name>       auto, ptrace or syscall\n"
	      "     --discovery <name>    auto, proc or bpf\n"
	      " -J, --json                print the whole report as JSON\n"
	      " -r, --raw                 use the raw output format\n"
	      " -n, --noheadings          don't print headings\n"
	      " -o, --output <list>       output columns (+<list> adds to the default)\n"
	      " -q, --quiet               print no table, only errors\n"
	      "\n"
	      " -h, --help                display this help\n"
	      " -V, --version             display version\n",
	      out);
	columns_help(out);
	fputs("\nFor more details see revoke(1).\n", out);
	exit(close_stdout() < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* Seconds as a decimal ("5", "0.5", ".25") into milliseconds, rounded up;
 * 0 < result <= INT_MAX. Parsed by hand: strtod would follow the locale
 * and accept "inf", "1e3" and hex. */
static int parse_timeout(const char *s, int *ret_ms)
{
	uint64_t ms = 0;
	bool digits = false, round_up = false;
	const char *p = s;

	for (; isdigit((unsigned char)*p); p++) {
		ms = ms * 10 + (uint64_t)(*p - '0');
		if (ms > INT_MAX / 1000)
			return -1;
		digits = true;
	}
	ms *= 1000;
	if (*p == '.') {
		uint64_t scale = 100;

		for (p++; isdigit((unsigned char)*p); p++) {
			if (scale > 0)
				ms += scale * (uint64_t)(*p - '0');
			else if (*p != '0')
				round_up = true;
			scale /= 10;
			digits = true;
		}
	}
	if (!digits || *p != '\0')
		return -1;
	ms += round_up;
	if (ms == 0 || ms > INT_MAX)
		return -1;
	*ret_ms = (int)ms;
	return 0;
}

/* No report: the paths could not all be resolved. Name the culprit by
 * looking each path up again the way the library does. */
static void report_lookup_failure(char *const *paths, size_t n, bool nofollow, int err)
{
	bool named = false;
	struct stat st;

	/* Looking the paths up again could hang as the library's lookup did. */
	if (err == ETIMEDOUT) {
		for (size_t i = 0; i < n; i++)
			warnx_("%s: %s", paths[i], strerror(err));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int r = nofollow ? lstat(paths[i], &st) : stat(paths[i], &st);

		if (r < 0) {
			warnx_("%s: %s", paths[i], strerror(errno));
			named = true;
		} else if (err == ELOOP && nofollow && S_ISLNK(st.st_mode)) {
			warnx_("%s: %s", paths[i], strerror(err));
			named = true;
		} else if (err == EPERM && st.st_uid != geteuid()) {
			warnx_("%s: %s", paths[i], strerror(err));
			named = true;
		}
	}
	if (named)
		return;
	for (size_t i = 0; i < n; i++) {
		if (err == ENOSYS)
			warnx_(
			    "%s: %s (the running kernel has no revoke system call, see --engine)",
			    paths[i], strerror(err));
		else
			warnx_("%s: %s", paths[i], strerror(err));
	}
}

static int holder_cmp(const void *a, const void *b)
{
	const struct revoke_holder *x = *(const struct revoke_holder *const *)a;
	const struct revoke_holder *y = *(const struct revoke_holder *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool ref_not_cut(const struct revoke_holder *h, const struct revoke_ref *r)
{
	if (r->state == REVOKE_STATE_FAILED || r->state == REVOKE_STATE_UNREACHABLE)
		return true;
	return (h->error || h->reason[0]) && r->state != REVOKE_STATE_CUT &&
	       r->state != REVOKE_STATE_KEPT;
}

static const char *ref_describe(const struct revoke_ref *r, char *buf, size_t size)
{
	switch (r->type) {
	case REVOKE_REF_FD:
		snprintf(buf, size, "fd %d", r->fd);
		break;
	case REVOKE_REF_MAP:
		snprintf(buf, size, "mapping %" PRIx64 "-%" PRIx64, r->start, r->end);
		break;
	case REVOKE_REF_URING:
		snprintf(buf, size, "io_uring fixed file (ring fd %d)", r->fd);
		break;
	case REVOKE_REF_INFLIGHT:
		snprintf(buf, size, "fd in flight (socket fd %d)", r->fd);
		break;
	default:
		snprintf(buf, size, "%s", revoke_ref_type_name(r->type) ?: "reference");
	}
	return buf;
}

/* One message per holder that could not be stopped (per target it holds),
 * and per reference that could not be cut. */
static void report_holders(const struct cli *cli, const struct revoke_report *rep)
{
	const struct revoke_holder **order =
	    calloc(rep->nholders ? rep->nholders : 1, sizeof(*order));

	if (!order) {
		warnx_("%s", strerror(ENOMEM));
		return;
	}
	for (size_t i = 0; i < rep->nholders; i++)
		order[i] = &rep->holders[i];
	qsort(order, rep->nholders, sizeof(*order), holder_cmp);

	for (size_t i = 0; i < rep->nholders; i++) {
		const struct revoke_holder *h = order[i];
		char comm[4 * sizeof(h->comm) + 1], what[96];

		comm_safe(h->comm, comm, sizeof(comm));
		if (h->state == REVOKE_STATE_UNINSPECTED) {
			warnx_("pid %d (%s, uid %u): %s", (int)h->pid, comm, (unsigned)h->uid,
			       h->reason[0] ? h->reason : "could not be inspected");
			continue;
		}
		if (h->error || h->reason[0]) {
			const char *why = holder_error_string(h);
			const char *verb = cli->list ? "" : "not stopped: ";
			bool any = false;

			for (size_t t = 0; t < rep->ntargets; t++) {
				bool holds = false;

				for (size_t k = 0; k < h->nrefs && !holds; k++)
					holds = h->refs[k].target == t;
				if (!holds)
					continue;
				warnx_("%s: pid %d (%s): %s%s", target_path(rep, t), (int)h->pid,
				       comm, verb, why);
				any = true;
			}
			if (!any)
				warnx_("pid %d (%s): %s%s", (int)h->pid, comm, verb, why);
			continue;
		}
		for (size_t k = 0; k < h->nrefs; k++) {
			const struct revoke_ref *r = &h->refs[k];

			if (r->state != REVOKE_STATE_FAILED && r->state != REVOKE_STATE_UNREACHABLE)
				continue;
			warnx_("%s: pid %d (%s): %s: not cut: %s", target_path(rep, r->target),
			       (int)h->pid, comm, ref_describe(r, what, sizeof(what)),
			       r->error ? strerror(r->error) : "unknown reason");
		}
	}
	free(order);
}

/* "timed out after 5.0 s stopping pid 123 (state D)" */
static const char *timeout_text(const struct revoke_report *rep, char *buf, size_t size)
{
	static const char *const doing[] = {
	    [REVOKE_PHASE_RESOLVE] = "looking the path up",
	    [REVOKE_PHASE_LOCK] = "waiting for another revoke",
	    [REVOKE_PHASE_SCAN] = "finding the holders",
	    [REVOKE_PHASE_STOP] = "stopping",
	    [REVOKE_PHASE_CUT] = "cutting",
	    [REVOKE_PHASE_RELEASE] = "releasing",
	};
	bool have = rep->sz >= offsetof(struct revoke_report, failed_detail) + 1;
	int ph = have ? rep->failed_phase : 0;
	const char *what = ph > 0 && (size_t)ph < ARRAY_SIZE(doing) ? doing[ph] : NULL;
	size_t n;

	n = (size_t)snprintf(buf, size, "timed out after %.1f s",
			     (have ? rep->timeout_ns : rep->elapsed_ns) / 1e9);
	if (what && n < size)
		n += (size_t)snprintf(buf + n, size - n, " %s", what);
	if (have && rep->failed_pid > 0 && n < size)
		n +=
		    (size_t)snprintf(buf + n, size - n, "%s pid %d",
				     ph == REVOKE_PHASE_STOP || ph == REVOKE_PHASE_CUT ? "" : " by",
				     (int)rep->failed_pid);
	if (have && rep->failed_detail[0] && n < size)
		snprintf(buf + n, size - n, " (%s)", rep->failed_detail);
	return buf;
}

/* One line per target that was not (fully) revoked or listed. */
static void report_targets(const struct cli *cli, const struct revoke_report *rep, int err,
			   bool best_effort)
{
	size_t uninspected =
	    rep->sz >= offsetof(struct revoke_report, nuninspected) + sizeof(size_t)
		? rep->nuninspected
		: 0;
	bool any_foreign = false;
	char tbuf[256];

	for (size_t t = 0; t < rep->ntargets; t++)
		any_foreign |= rep->targets[t].uid != geteuid();

	for (size_t t = 0; t < rep->ntargets; t++) {
		const char *path = target_path(rep, t);
		size_t bad = 0, total = 0;

		for (size_t i = 0; i < rep->nholders; i++) {
			const struct revoke_holder *h = &rep->holders[i];

			for (size_t k = 0; k < h->nrefs; k++) {
				if (h->refs[k].target != t)
					continue;
				total++;
				bad += ref_not_cut(h, &h->refs[k]);
			}
		}

		if (err == EPERM && any_foreign && rep->targets[t].uid == geteuid())
			continue; /* name only the files the caller does not own */
		if (err == ETIMEDOUT)
			warnx_("%s: %s%s", path, cli->list ? "" : "not revoked: ",
			       timeout_text(rep, tbuf, sizeof(tbuf)));
		else if (err == EBUSY && uninspected && !bad && !best_effort)
			warnx_("%s: %s%zu process%s could not be inspected and may hold it (see "
			       "--best-effort)",
			       path, cli->list ? "" : "not revoked: ", uninspected,
			       uninspected == 1 ? "" : "es");
		else if (cli->list)
			warnx_("%s: %s", path, strerror(err));
		else if (err != EBUSY)
			warnx_("%s: not revoked: %s", path, strerror(err));
		else if (best_effort && bad)
			warnx_("%s: partly revoked: %zu of %zu references could not be cut", path,
			       bad, total);
		else if (!best_effort && bad)
			warnx_(
			    "%s: not revoked: %zu reference%s could not be cut (see --best-effort)",
			    path, bad, bad == 1 ? "" : "s");
		else if (!best_effort)
			warnx_("%s: not revoked: nothing was changed (another path could not be "
			       "revoked)",
			       path);
	}
}

enum {
	OPT_NO_FOLLOW = CHAR_MAX + 1,
	OPT_NO_HANGUP,
	OPT_ENGINE,
	OPT_DISCOVERY,
};

/* The library keeps a pidfd per holder while it works: thousands of holders
 * need more than the usual soft limit of 1024 descriptors. */
static void raise_nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"list", no_argument, NULL, 'l'},
	    {"best-effort", no_argument, NULL, 'b'},
	    {"timeout", required_argument, NULL, 't'},
	    {"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
	    {"no-hangup", no_argument, NULL, OPT_NO_HANGUP},
	    {"engine", required_argument, NULL, OPT_ENGINE},
	    {"discovery", required_argument, NULL, OPT_DISCOVERY},
	    {"json", no_argument, NULL, 'J'},
	    {"raw", no_argument, NULL, 'r'},
	    {"noheadings", no_argument, NULL, 'n'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct revoke_opts opts = {.sz = sizeof(opts), .timeout_ms = 5000, .keep_fd = -1};
	struct revoke_report *rep = NULL;
	struct cli cli = {0};
	const char *output = NULL;
	int c, r, err, ret = EXIT_SUCCESS;
	size_t npaths;

	setlocale(LC_ALL, "");
	argv[0] = program_invocation_short_name; /* for getopt's messages */
	raise_nofile_limit();

	while ((c = getopt_long(argc, argv, "lbt:Jrno:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			cli.list = true;
			opts.flags |= REVOKE_LIST_ONLY;
			break;
		case 'b':
			opts.flags |= REVOKE_BEST_EFFORT;
			break;
		case 't':
			if (parse_timeout(optarg, &opts.timeout_ms) < 0)
				usage_error("invalid timeout '%s': expected seconds, e.g. 5 or 0.5 "
					    "(at most %d)",
					    optarg, INT_MAX / 1000);
			break;
		case OPT_NO_FOLLOW:
			opts.flags |= REVOKE_NOFOLLOW;
			break;
		case OPT_NO_HANGUP:
			opts.flags |= REVOKE_NO_HANGUP;
			break;
		case OPT_ENGINE:
			opts.flags &= ~(unsigned)(REVOKE_ENGINE_USERSPACE | REVOKE_ENGINE_NATIVE);
			if (strcmp(optarg, "ptrace") == 0)
				opts.flags |= REVOKE_ENGINE_USERSPACE;
			else if (strcmp(optarg, "syscall") == 0)
				opts.flags |= REVOKE_ENGINE_NATIVE;
			else if (strcmp(optarg, "auto") != 0)
				usage_error("unknown engine '%s': expected auto, ptrace or syscall",
					    optarg);
			break;
		case OPT_DISCOVERY:
			opts.flags &= ~(unsigned)(REVOKE_DISCOVERY_PROC | REVOKE_DISCOVERY_BPF);
			if (strcmp(optarg, "proc") == 0)
				opts.flags |= REVOKE_DISCOVERY_PROC;
			else if (strcmp(optarg, "bpf") == 0)
				opts.flags |= REVOKE_DISCOVERY_BPF;
			else if (strcmp(optarg, "auto") != 0)
				usage_error("unknown discovery '%s': expected auto, proc or bpf",
					    optarg);
			break;
		case 'J':
			cli.json = true;
			break;
		case 'r':
			cli.raw = true;
			break;
		case 'n':
			cli.noheadings = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			cli.quiet = true;
			break;
		case 'h':
			usage();
		case 'V':
			printf("%s from librevoke %s\n", program_invocation_short_name,
			       revoke_version());
			return close_stdout() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n",
				program_invocation_short_name);
			return EXIT_USAGE;
		}
	}

	if (cli.json && (cli.raw || cli.noheadings || output || cli.quiet))
		usage_error("--json cannot be combined with %s", cli.raw	  ? "--raw"
								 : cli.noheadings ? "--noheadings"
								 : output	  ? "--output"
										  : "--quiet");
	if (optind >= argc)
		usage_error("no PATH given");
	npaths = (size_t)(argc - optind);

	columns_default(&cli);
	if (output) {
		const char *bad;
		size_t badlen;

		r = columns_parse(&cli, output, &bad, &badlen);
		if (r == -2)
			usage_error("too many columns in '%s' (at most %d)", output, MAX_COLUMNS);
		if (r < 0) {
			if (badlen == 0)
				usage_error("empty column name in '%s'", output);
			usage_error("unknown column: %.*s", (int)badlen, bad);
		}
	}

	/* A Ctrl-C, a SIGTERM from a service manager, a hangup or a closed
	 * pipe must not cut the call short: holders are stopped and being cut.
	 * Held back until the call is over (it is bounded by --timeout), then
	 * acted upon as usual once the report is out. */
	{
		sigset_t hold;

		sigemptyset(&hold);
		sigaddset(&hold, SIGINT);
		sigaddset(&hold, SIGTERM);
		sigaddset(&hold, SIGHUP);
		sigaddset(&hold, SIGPIPE);
		sigprocmask(SIG_BLOCK, &hold, &held_back);
		held = true;
	}
	r = revoke_ex((const char *const *)(argv + optind), npaths, &opts, &rep);
	err = r < 0 ? errno : 0;
	if (r < 0 && err == 0)
		err = EIO;

	if (!rep) {
		if (r < 0)
			report_lookup_failure(argv + optind, npaths, opts.flags & REVOKE_NOFOLLOW,
					      err);
		else
			warnx_("%s", "the library returned no report");
		deliver_held_signals();
		return EXIT_FAILURE;
	}

	if (cli.json || !cli.quiet) {
		int w;

		errno = 0;
		w = cli.json ? print_json(stdout, rep) : print_table(&cli, rep);
		if (ferror(stdout)) {
			/* a write error: reported once, by close_stdout() */
			if (stdout_errno == 0)
				stdout_errno = w < 0 ? -w : errno ? errno : EIO;
		} else if (w < 0) {
			warnx_("cannot print the report: %s", strerror(-w));
			ret = EXIT_FAILURE;
		}
	}

	report_holders(&cli, rep);
	if (r < 0) {
		report_targets(&cli, rep, err, opts.flags & REVOKE_BEST_EFFORT);
		ret = EXIT_FAILURE;
	}
	revoke_report_free(rep);

	if (close_stdout() < 0)
		ret = EXIT_FAILURE;
	deliver_held_signals();
	return ret;
}
