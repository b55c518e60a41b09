/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoke - revoke every reference to files, or list their holders.
 * Options, the call into librevoke, signals and the exit status; the
 * columns are in columns.c, the table and the JSON document in output.c,
 * the messages in messages.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <pwd.h>
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
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"

#define EXIT_USAGE 2

/*
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE are held back during the call: holders
 * are stopped and being cut, and a call cut short could leave them so (the
 * call is bounded by --timeout). Those that arrived meanwhile act once the
 * report is out: the process then dies by that signal, as its sender
 * expects. The others act at once again after the call (nothing is left to
 * protect), but SIGPIPE, held until the messages are out: a closed pipe
 * on standard output then ends the command as it does any util-linux tool,
 * by SIGPIPE (or, when SIGPIPE is ignored, exit status 1), never with a
 * "write error" message.
 */
static const int held_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static sigset_t saved_mask;
static bool holding;

static void hold_signals(void)
{
	sigset_t hold;

	sigemptyset(&hold);
	for (size_t i = 0; i < ARRAY_SIZE(held_signals); i++)
		sigaddset(&hold, held_signals[i]);
	sigprocmask(SIG_BLOCK, &hold, &saved_mask);
	holding = true;
}

/* After the call: a Ctrl-C while the report is printed acts at once. */
static void release_quiet_signals(void)
{
	sigset_t pending, go;

	sigemptyset(&go);
	if (sigpending(&pending) < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(held_signals); i++) {
		int sig = held_signals[i];

		if (sig != SIGPIPE && !sigismember(&pending, sig) && !sigismember(&saved_mask, sig))
			sigaddset(&go, sig);
	}
	sigprocmask(SIG_UNBLOCK, &go, NULL);
}

/* A signal that arrived during the call takes its course now. */
static void deliver_held_signals(void)
{
	if (holding) {
		holding = false;
		sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	}
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

/* Flush and close stdout; a failed write is an error like any other, but
 * a reader that went away (EPIPE) is no news to anyone. */
static int close_stdout(void)
{
	flush_stdout();
	if (ferror(stdout) && stdout_errno == 0)
		stdout_errno = EIO;
	stdout_closed = true;
	if (fclose(stdout) != 0 && stdout_errno == 0)
		stdout_errno = errno ? errno : EIO;
	if (stdout_errno && stdout_errno != EPIPE)
		warnx_("write error: %s", strerror(stdout_errno));
	return stdout_errno ? -1 : 0;
}

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	fprintf(out, "\nUsage:\n %s [options] <path>...\n", program_invocation_short_name);
	fprintf(out, " %s [options] --description /proc/<pid>/fd/<n>\n",
		program_invocation_short_name);
	fprintf(out, " %s [options] --umount <mountpoint>...\n", program_invocation_short_name);
	fprintf(out, " %s [options] --list --mount <mountpoint>...\n",
		program_invocation_short_name);
	fputs("\nRevoke every open descriptor and memory mapping of the files, in every process,\n"
	      "or list who holds them. With --umount, cut everything that keeps a mount busy\n"
	      "and unmount it, killing nobody.\n",
	      out);
	fputs(
	    "\nOptions:\n"
	    " -l, --list                list the holders, change nothing\n"
	    " -b, --best-effort         cut what can be cut, report the rest\n"
	    " -t, --timeout <seconds>   bound on the whole operation (default 5, or\n"
	    "                           REVOKE_TIMEOUT from the environment)\n"
	    " -m, --mount               the paths are mount points: every file reached\n"
	    "                           through them (and the mounts beneath them)\n"
	    "     --umount              sync, cut everything on the mounts, unmount them\n"
	    "     --dry-run             with --umount: say whether it would go ahead\n"
	    "     --no-submounts        with --mount: not the mounts beneath\n"
	    "     --ns <pid>            look the paths up as process <pid> sees them (its\n"
	    "                           mount namespace, root and cwd: a container's files)\n"
	    "     --pid <pid>[,...]     only these processes\n"
	    "     --uid <user>[,...]    only processes whose real or effective uid is one of "
	    "these\n"
	    "     --cgroup <dir>        only processes in this cgroup v2 subtree (a directory, or\n"
	    "                           a path as /proc/PID/cgroup prints it)\n"
	    "     --description <path>  one open file description, /proc/PID/fd/N: every\n"
	    "                           descriptor sharing it, in every process; no <path>\n"
	    "     --recheck             only holders who could no longer open the file in\n"
	    "                           the mode they hold it (after chmod, chown, setfacl)\n"
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
	fputs("\nEither every holder is cut or nothing is changed, unless --best-effort.\n"
	      "Processes that may hold a file but cannot be looked at (another user's, without\n"
	      "privileges) show with state uninspected and fail the call (or the listing)\n"
	      "unless --best-effort. A holder that cannot be stopped in time (state D) fails\n"
	      "it: \"timed out after 5.0 s stopping pid 123 (state D)\"; the time is --timeout.\n"
	      "A descriptor an earlier revoke left reads /memfd:revoked (deleted); revoking\n"
	      "it fails: \"is a descriptor that an earlier revoke left\".\n"
	      "SIGINT, SIGTERM, SIGHUP and SIGPIPE arriving during the operation act once it\n"
	      "is over and reported: every holder is cut or untouched, none left stopped.\n",
	      out);
	fputs("With --umount, cwd and root directories on the mount move to a dead directory;\n"
	      "running programs, executable mappings, swap files, loop devices and mounts of\n"
	      "it in other namespaces refuse the unmount (nothing is changed).\n",
	      out);
	fputs("\nExit status:\n"
	      " 0  every holder was cut (or there was none), or the listing is complete;\n"
	      "    --umount: every mount was unmounted (--dry-run: it would be tried)\n"
	      " 1  something was not revoked, a path failed, or the listing is incomplete;\n"
	      "    --umount: not unmounted\n"
	      " 2  usage error\n",
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

enum {
	OPT_NO_FOLLOW = CHAR_MAX + 1,
	OPT_NO_HANGUP,
	OPT_ENGINE,
	OPT_DISCOVERY,
	OPT_UMOUNT,
	OPT_DRY_RUN,
	OPT_NO_SUBMOUNTS,
	OPT_NS,
	OPT_PID,
	OPT_UID,
	OPT_CGROUP,
	OPT_DESCRIPTION,
	OPT_RECHECK,
};

/* The most pids or uids one selection takes (the library's limit). */
#define MAX_SELECT 64

/* --pid PID[,PID...]: appended to PIDS. */
static void parse_pids(const char *arg, pid_t *pids, size_t *n)
{
	const char *p = arg;

	do {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || v <= 0 || v > INT_MAX)
			usage_error("invalid pid in '%s' for --pid", arg);
		if (*n == MAX_SELECT)
			usage_error("too many pids for --pid (at most %d)", MAX_SELECT);
		pids[(*n)++] = (pid_t)v;
		p = *end ? end + 1 : end;
	} while (*p);
}

/* --uid USER[,USER...], names or numbers: appended to UIDS. */
static void parse_uids(const char *arg, uid_t *uids, size_t *n)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		usage_error("%s", strerror(ENOMEM));
	if (!*arg || arg[strlen(arg) - 1] == ',')
		usage_error("invalid user in '%s' for --uid", arg);
	for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
		struct passwd *pw;
		char *end;
		long v;

		if (*n == MAX_SELECT)
			usage_error("too many users for --uid (at most %d)", MAX_SELECT);
		errno = 0;
		v = strtol(u, &end, 10);
		if (!errno && end != u && !*end && v >= 0 && v < (long)UINT32_MAX) {
			uids[(*n)++] = (uid_t)v;
			continue;
		}
		pw = getpwnam(u);
		if (!pw)
			usage_error("no such user '%s' for --uid", u);
		uids[(*n)++] = pw->pw_uid;
	}
	free(copy);
}

/* --description /proc/PID/fd/N: PID and N, or a usage error. Only that
 * spelling: any other path would be opened anew, a description of its own. */
static void parse_description(const char *arg, pid_t *ret_pid, int *ret_fd)
{
	const char *p = arg;
	long v[2];

	if (strncmp(p, "/proc/", 6) != 0)
		goto bad;
	p += 6;
	for (int i = 0; i < 2; i++) {
		char *end;

		/* /proc spells no leading zero: "/proc/07" is no process. */
		if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
			goto bad;
		errno = 0;
		v[i] = strtol(p, &end, 10);
		if (errno || v[i] > INT_MAX || (i == 0 && v[i] == 0))
			goto bad;
		p = end;
		if (i == 0 && strncmp(p, "/fd/", 4) != 0)
			goto bad;
		p += i == 0 ? 4 : 0;
	}
	if (*p)
		goto bad;
	*ret_pid = (pid_t)v[0];
	*ret_fd = (int)v[1];
	return;
bad:
	usage_error("--description wants /proc/PID/fd/N, not '%s'", arg);
}

/* A copy of process PID's descriptor N (pidfd_getfd: the same open file
 * description, not a new open), or -1 with the reason said. */
static int take_description(const char *arg, pid_t pid, int n)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), fd;

	if (pidfd < 0) {
		warnx_("--description %s: %s", arg,
		       errno == ESRCH ? "no such process" : strerror(errno));
		return -1;
	}
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
	if (fd < 0)
		warnx_("--description %s: %s", arg,
		       errno == EBADF	? "no such open descriptor"
		       : errno == ESRCH ? "no such process"
		       : errno == EPERM
			   ? "not allowed to take it (needs ptrace access to the process)"
			   : strerror(errno));
	close(pidfd);
	return fd;
}

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
	    {"mount", no_argument, NULL, 'm'},
	    {"umount", no_argument, NULL, OPT_UMOUNT},
	    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
	    {"no-submounts", no_argument, NULL, OPT_NO_SUBMOUNTS},
	    {"ns", required_argument, NULL, OPT_NS},
	    {"pid", required_argument, NULL, OPT_PID},
	    {"uid", required_argument, NULL, OPT_UID},
	    {"cgroup", required_argument, NULL, OPT_CGROUP},
	    {"description", required_argument, NULL, OPT_DESCRIPTION},
	    {"recheck", no_argument, NULL, OPT_RECHECK},
	    {"json", no_argument, NULL, 'J'},
	    {"raw", no_argument, NULL, 'r'},
	    {"noheadings", no_argument, NULL, 'n'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	/* timeout_ms 0: the library's default, 5 s or REVOKE_TIMEOUT. */
	struct revoke_opts opts = {.sz = sizeof(opts), .keep_fd = -1};
	pid_t pids[MAX_SELECT];
	uid_t uids[MAX_SELECT];
	struct revoke_report *rep = NULL;
	struct cli cli = {0};
	const char *output = NULL, *description = NULL;
	char *desc_path[1], **paths;
	pid_t desc_pid = 0;
	int c, r, err, ret = EXIT_SUCCESS, desc_n = -1;
	size_t npaths;

	setlocale(LC_ALL, "");
	argv[0] = program_invocation_short_name; /* for getopt's messages */
	raise_nofile_limit();

	while ((c = getopt_long(argc, argv, "lbt:mJrno:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			cli.list = true;
			opts.flags |= REVOKE_LIST_ONLY;
			break;
		case 'b':
			cli.best_effort = true;
			opts.flags |= REVOKE_BEST_EFFORT;
			break;
		case 't':
			if (parse_timeout(optarg, &opts.timeout_ms) < 0)
				usage_error("invalid timeout '%s': expected seconds, e.g. 5 or 0.5 "
					    "(at most %d)",
					    optarg, INT_MAX / 1000);
			break;
		case 'm':
			cli.mount = true;
			opts.flags |= REVOKE_MOUNT;
			break;
		case OPT_UMOUNT:
			cli.umount = cli.mount = true;
			opts.flags |= REVOKE_MOUNT | REVOKE_UMOUNT;
			break;
		case OPT_DRY_RUN:
			cli.dry_run = true;
			break;
		case OPT_NO_SUBMOUNTS:
			opts.flags |= REVOKE_NO_SUBMOUNTS;
			break;
		case OPT_NS: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				usage_error("invalid pid '%s' for --ns", optarg);
			cli.ns = (pid_t)v;
			opts.ns_pid = cli.ns;
			break;
		}
		case OPT_PID:
			parse_pids(optarg, pids, &opts.npids);
			opts.pids = pids;
			break;
		case OPT_UID:
			parse_uids(optarg, uids, &opts.nuids);
			opts.uids = uids;
			break;
		case OPT_CGROUP:
			if (!*optarg)
				usage_error("empty cgroup for --cgroup");
			opts.cgroup = optarg;
			break;
		case OPT_DESCRIPTION:
			parse_description(optarg, &desc_pid, &desc_n);
			description = optarg;
			opts.flags |= REVOKE_DESCRIPTION;
			break;
		case OPT_RECHECK:
			opts.flags |= REVOKE_RECHECK;
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
	if (cli.dry_run && !cli.umount)
		usage_error("--dry-run goes with --umount");
	if (cli.umount && cli.list)
		usage_error("--umount cannot be combined with --list (see --dry-run)");
	if ((opts.flags & REVOKE_NO_SUBMOUNTS) && !(opts.flags & REVOKE_MOUNT))
		usage_error("--no-submounts goes with --mount or --umount");
	if (cli.ns && cli.mount)
		usage_error("--ns cannot be combined with %s", cli.umount ? "--umount" : "--mount");
	if ((opts.npids || opts.nuids || opts.cgroup) && cli.mount)
		usage_error("--%s cannot be combined with %s",
			    opts.npids	 ? "pid"
			    : opts.nuids ? "uid"
					 : "cgroup",
			    cli.umount ? "--umount" : "--mount");
	if ((opts.flags & (REVOKE_DESCRIPTION | REVOKE_RECHECK)) && (cli.mount || cli.umount))
		usage_error("--%s cannot be combined with %s",
			    description ? "description" : "recheck",
			    cli.umount ? "--umount" : "--mount");
	if (description && (opts.flags & REVOKE_RECHECK))
		usage_error("--description cannot be combined with --recheck");
	if (description && cli.ns)
		usage_error("--description cannot be combined with --ns");
	if (description && optind < argc)
		usage_error("--description names the file: no PATH goes with it ('%s')",
			    argv[optind]);
	if (cli.dry_run) {
		cli.list = true;
		opts.flags |= REVOKE_LIST_ONLY;
	}
	if (optind >= argc && !description)
		usage_error(cli.umount || (opts.flags & REVOKE_MOUNT) ? "no MOUNTPOINT given"
								      : "no PATH given");
	/* The messages name a description as they would a path. */
	desc_path[0] = (char *)description;
	paths = description ? desc_path : argv + optind;
	npaths = description ? 1 : (size_t)(argc - optind);

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

	if (description) {
		int fd = take_description(description, desc_pid, desc_n);

		if (fd < 0) {
			close_stdout();
			return EXIT_FAILURE;
		}
		hold_signals();
		/* Our copy shares the description: the library cuts it too. */
		r = frevoke_ex(fd, &opts, &rep);
		err = r < 0 ? errno : 0;
		close(fd);
	} else {
		hold_signals();
		r = revoke_ex((const char *const *)paths, npaths, &opts, &rep);
		err = r < 0 ? errno : 0;
	}
	if (r < 0 && err == 0)
		err = EIO;
	release_quiet_signals();

	if (!rep) {
		if (r < 0 && cli.ns)
			report_ns_failure(paths, npaths, cli.ns, err);
		else if (r < 0 && description)
			warnx_("--description %s: %s", description,
			       err == EBADF ? "is a descriptor that an earlier revoke left"
			       : err == EINVAL
				   ? "refused: an anonymous inode (eventfd, epoll...) or a "
				     "device every process shares"
			       : err == EPERM ? "not the owner of the file (needs CAP_FOWNER)"
					      : strerror(err));
		else if (r < 0)
			report_lookup_failure(paths, npaths, opts.flags & REVOKE_NOFOLLOW,
					      opts.flags & REVOKE_MOUNT, err);
		else
			warnx_("%s", "the library returned no report");
		close_stdout();
		deliver_held_signals();
		return EXIT_FAILURE;
	}

	if (cli.json || !cli.quiet) {
		int w;

		columns_for_report(&cli, rep);
		errno = 0;
		w = cli.json ? print_json(rep) : print_table(&cli, rep);
		if (ferror(stdout)) {
			/* a write error: reported once, by close_stdout() */
			if (stdout_errno == 0)
				stdout_errno = errno ? errno : w < 0 ? -w : EIO;
		} else if (w < 0) {
			warnx_("cannot print the report: %s", strerror(-w));
			ret = EXIT_FAILURE;
		}
	}

	report_outcome(&cli, rep, err, paths, npaths);
	if (r < 0)
		ret = EXIT_FAILURE;
	revoke_report_free(rep);

	if (close_stdout() < 0)
		ret = EXIT_FAILURE;
	deliver_held_signals();
	return ret;
}
