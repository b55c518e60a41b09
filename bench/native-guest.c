/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-native-guest: the guest side of bench/native. Run as one of
 * kernel/run-tests' programs in the patched kernel's guest (booted with
 * --icount: the guest clock counts instructions), it revokes a file held by
 * fresh holders (bench-holders) with the native engine (revoke's own choice
 * on this kernel), with the userspace engine forced (--engine ptrace), lists
 * them (revoke --list), and makes the bare system call (revokeat(2), the
 * kernel's part alone), in turn, and checks every outcome. Its parameters
 * come from the environment (the kernel command line: run-tests --env),
 * since run-tests passes programs no arguments:
 *
 *   NATIVE_HOLDERS   holder counts, comma-separated (default 10,100,1000)
 *   NATIVE_RUNS      runs of each mode per count and variant (default 3)
 *   NATIVE_VARIANTS  fd (one descriptor each) and/or map (a descriptor and a
 *                    shared mapping each), comma-separated (default fd,map)
 *
 * One line per run, key=value, for bench/native to read:
 *   NATIVE-RUN variant=fd holders=N mode=native|userspace|list|syscall run=R ok=1
 *     wall_ns=... elapsed_ns=... max_stopped_ns=... engine=... discovery=...
 *     nholders=... holders_cut=... refs=... refs_cut=... left=... exit=...
 * a NATIVE-STEPS line with the report's steps_ns (start=... report=...), and
 * NATIVE-FAIL lines saying why a run is not a figure. Exit status 0 only
 * when every run was checked good.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_NATIVE, MODE_USERSPACE, MODE_LIST, MODE_SYSCALL, NMODES };
static const char *const mode_names[NMODES] = {"native", "userspace", "list", "syscall"};

/* revokeat's number, as the series publishes it ("revokeat 472"), or -1. */
static long revokeat_nr(void)
{
	FILE *f = fopen("/sys/kernel/revoke/syscalls", "re");
	char name[32];
	long nr;

	while (f && fscanf(f, "%31s %ld", name, &nr) == 2)
		if (strcmp(name, "revokeat") == 0) {
			fclose(f);
			return nr;
		}
	if (f)
		fclose(f);
	return -1;
}

struct holders {
	pid_t pid; /* bench-holders */
	int ctl;   /* its stdin: EOF makes it kill and reap the holders */
	pid_t *v;  /* the holders, from its pid file */
	size_t n;
};

/* The keys of the report's "steps_ns" (revoke_step_name()), in order. */
static const char *const steps[] = {"start", "resolve", "lock",	   "scan", "stop",   "rescan",
				    "place", "cut",	"release", "sync", "umount", "report"};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

struct outcome {
	int exit;
	uint64_t wall_ns, elapsed_ns, max_stopped_ns, step_ns[NSTEPS];
	char engine[16], discovery[16];
	long nholders;
	size_t holders, holders_cut, refs, refs_cut, left, dead;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void holders_stop(struct holders *h)
{
	if (h->ctl >= 0)
		close(h->ctl);
	if (h->pid > 0)
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
	free(h->v);
	*h = (struct holders){.ctl = -1};
}

/* bench-holders --target FILE --procs N --fds 1 [--no-map], until "ready". */
static int holders_start(struct holders *h, const char *target, int n, bool map)
{
	static const char pidfile[] = "/tmp/native-bench.pids";
	int in[2], out[2];
	char nbuf[16], line[64];
	FILE *f;
	pid_t p;

	*h = (struct holders){.ctl = -1};
	snprintf(nbuf, sizeof(nbuf), "%d", n);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		char *argv[] = {"bench-holders",
				"--target",
				(char *)target,
				"--procs",
				nbuf,
				"--fds",
				"1",
				"--pidfile",
				(char *)pidfile,
				map ? NULL : "--no-map",
				NULL};

		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h->ctl = in[1];
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "ready ", 6) != 0) {
		if (f)
			fclose(f);
		printf("NATIVE-FAIL bench-holders --procs %d did not get ready\n", n);
		holders_stop(h);
		return -1;
	}
	fclose(f);
	f = fopen(pidfile, "re");
	h->v = calloc((size_t)n, sizeof(*h->v));
	while (f && h->v && h->n < (size_t)n && fscanf(f, "%d", &p) == 1)
		h->v[h->n++] = p;
	if (f)
		fclose(f);
	if (h->n != (size_t)n) {
		printf("NATIVE-FAIL bench-holders wrote %zu pids, not %d\n", h->n, n);
		holders_stop(h);
		return -1;
	}
	return 0;
}

/* The command, its stdout to OUT, stderr to ERR; its wall time around fork
 * and wait (what a user waits for, the command's start and exit included). */
static int timed(char *const argv[], const char *out, const char *err, uint64_t *wall_ns)
{
	uint64_t t0 = now_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*wall_ns = now_ns() - t0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&s, &len, '\0', f) < 0) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static uint64_t json_u64(const char *doc, const char *key)
{
	const char *p = strstr(doc, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void json_str(const char *doc, const char *key, char *buf, size_t size)
{
	const char *p = strstr(doc, key);
	size_t n = 0;

	if (p)
		for (p += strlen(key); *p && *p != '"' && n + 1 < size; p++)
			buf[n++] = *p;
	buf[n] = '\0';
}

/*
 * The report as revoke --json writes it (libsmartcols: one key per line,
 * `"key": value`): holders are the objects whose "pid" is a number, their
 * references (children) the ones whose "pid" is null; each object's "state"
 * follows its "pid".
 */
static void read_report(const char *doc, struct outcome *o)
{
	static const char pid_key[] = "\"pid\": ", state_key[] = "\"state\": \"";
	const char *p = strstr(doc, "\"holders\":");

	o->elapsed_ns = json_u64(doc, "\"elapsed_ns\": ");
	o->max_stopped_ns = json_u64(doc, "\"max_stopped_ns\": ");
	o->nholders = (long)json_u64(doc, "\"nholders\": ");
	json_str(doc, "\"engine\": \"", o->engine, sizeof(o->engine));
	json_str(doc, "\"discovery\": \"", o->discovery, sizeof(o->discovery));
	/* Where the library's time went (librevoke 1.6; absent before). */
	const char *st = strstr(doc, "\"steps_ns\": {"), *end = st ? strchr(st, '}') : NULL;
	for (size_t i = 0; end && i < NSTEPS; i++) {
		char key[32];
		const char *k;

		snprintf(key, sizeof(key), "\"%s\": ", steps[i]);
		k = strstr(st, key);
		if (k && k < end)
			o->step_ns[i] = strtoull(k + strlen(key), NULL, 10);
	}
	while (p && (p = strstr(p, pid_key))) {
		bool holder = p[sizeof(pid_key) - 1] >= '0' && p[sizeof(pid_key) - 1] <= '9';
		const char *s = strstr(p, state_key);

		if (!s)
			break;
		s += sizeof(state_key) - 1;
		bool cut = strncmp(s, "cut\"", 4) == 0;
		if (holder) {
			o->holders++;
			o->holders_cut += cut;
		} else {
			o->refs++;
			o->refs_cut += cut;
		}
		p = s;
	}
}

static bool same_file(int dirfd, const char *name, const struct stat *target)
{
	struct stat st;

	return fstatat(dirfd, name, &st, 0) == 0 && st.st_dev == target->st_dev &&
	       st.st_ino == target->st_ino;
}

/* References to TARGET left in any process: its descriptors and mappings as
 * /proc shows them (what fuser looks at); a revoked one no longer resolves. */
static size_t left_in_proc(const struct stat *target)
{
	static const char *const dirs[] = {"fd", "map_files"};
	DIR *proc = opendir("/proc");
	struct dirent *e;
	size_t left = 0;

	while (proc && (e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		for (size_t i = 0; i < 2; i++) {
			char path[300];
			DIR *d;
			struct dirent *r;

			snprintf(path, sizeof(path), "/proc/%s/%s", e->d_name, dirs[i]);
			d = opendir(path);
			while (d && (r = readdir(d)))
				if (r->d_name[0] != '.' && same_file(dirfd(d), r->d_name, target))
					left++;
			if (d)
				closedir(d);
		}
	}
	if (proc)
		closedir(proc);
	return left;
}

/* Holders that died (a revoke must cut, not kill): gone, or a zombie. */
static size_t dead_holders(const struct holders *h)
{
	size_t dead = 0;

	for (size_t i = 0; i < h->n; i++) {
		char path[64], buf[256], *rp;
		int fd, len;

		snprintf(path, sizeof(path), "/proc/%d/stat", h->v[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		len = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (len <= 0) {
			dead++;
			continue;
		}
		buf[len] = '\0';
		rp = strrchr(buf, ')');
		if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
			dead++;
	}
	return dead;
}

static void show_err(const char *path)
{
	char *s = slurp(path);

	if (s && *s)
		printf("NATIVE-FAIL   stderr: %.600s\n", s);
	free(s);
}

/* One run: fresh holders of a fresh file, one command, every check. */
static bool one_run(const char *variant, int n, enum mode m, int run)
{
	static const char json[] = "/tmp/native-bench.json", err[] = "/tmp/native-bench.err";
	char target[64];
	struct holders h;
	struct outcome o = {0};
	struct stat st;
	char *doc;
	bool ok = true;
	int fd;

	snprintf(target, sizeof(target), "/tmp/native-target-%s-%d-%s-%d", variant, n,
		 mode_names[m], run);
	fd = open(target, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 65536) < 0 || fstat(fd, &st) < 0) {
		printf("NATIVE-FAIL %s: %s\n", target, strerror(errno));
		return false;
	}
	close(fd);
	if (holders_start(&h, target, n, strcmp(variant, "map") == 0) < 0)
		return false;

	/* No --engine: the engine the library picks, as users get it; the
	 * report's "engine" must then say syscall. */
	char *native[] = {"revoke", "--json", "--timeout", "600", target, NULL};
	char *userspace[] = {"revoke",	  "--json", "--engine", "ptrace",
			     "--timeout", "600",    target,	NULL};
	char *list[] = {"revoke", "--list", "--json", "--timeout", "600", target, NULL};
	char *const *argv = m == MODE_NATIVE ? native : m == MODE_USERSPACE ? userspace : list;

	if (m == MODE_SYSCALL) {
		/* The kernel's part alone: the system call the native engine
		 * makes, with no discovery, report or command around it. */
		long nr = revokeat_nr();
		uint64_t t0 = now_ns();

		o.exit = nr < 0 ? 1 : syscall(nr, AT_FDCWD, target, 0) < 0 ? 2 : 0;
		o.wall_ns = o.elapsed_ns = now_ns() - t0;
		if (o.exit)
			printf("NATIVE-FAIL revokeat %s: %s\n", target,
			       nr < 0 ? "no /sys/kernel/revoke/syscalls" : strerror(errno));
		o.exit = o.exit ? 1 : 0;
	} else {
		o.exit = timed(argv, json, err, &o.wall_ns);
		doc = slurp(json);
		if (doc)
			read_report(doc, &o);
		free(doc);
	}
	if (m != MODE_LIST)
		o.left = left_in_proc(&st);
	o.dead = dead_holders(&h);

	/* Every check that makes the run a figure. */
	size_t want_refs = (size_t)n * (strcmp(variant, "map") == 0 ? 2 : 1);
	const char *want_engine = m == MODE_NATIVE	? "syscall"
				  : m == MODE_USERSPACE ? "ptrace"
							: "none";
	if (o.exit != 0) {
		printf("NATIVE-FAIL %s %d %s run %d: exit %d\n", variant, n, mode_names[m], run,
		       o.exit);
		if (m != MODE_SYSCALL)
			show_err(err);
		ok = false;
	}
	if (m == MODE_SYSCALL)
		; /* no report: /proc and the holders say it all */
	else if (o.nholders != n || o.holders != (size_t)n || o.refs != want_refs) {
		printf("NATIVE-FAIL %s %d %s run %d: report has nholders %ld, %zu holders and "
		       "%zu references, not %d and %zu\n",
		       variant, n, mode_names[m], run, o.nholders, o.holders, o.refs, n, want_refs);
		ok = false;
	}
	if (m != MODE_SYSCALL && strcmp(o.engine, want_engine) != 0) {
		printf("NATIVE-FAIL %s %d %s run %d: engine %s, not %s\n", variant, n,
		       mode_names[m], run, o.engine, want_engine);
		ok = false;
	}
	if (m != MODE_LIST && m != MODE_SYSCALL &&
	    (o.holders_cut != (size_t)n || o.refs_cut != want_refs)) {
		printf("NATIVE-FAIL %s %d %s run %d: %zu holders and %zu references cut\n", variant,
		       n, mode_names[m], run, o.holders_cut, o.refs_cut);
		ok = false;
	}
	if (o.left) {
		printf("NATIVE-FAIL %s %d %s run %d: /proc still shows %zu references\n", variant,
		       n, mode_names[m], run, o.left);
		ok = false;
	}
	if (o.dead) {
		printf("NATIVE-FAIL %s %d %s run %d: %zu holders died\n", variant, n, mode_names[m],
		       run, o.dead);
		ok = false;
	}
	printf("NATIVE-RUN variant=%s holders=%d mode=%s run=%d ok=%d wall_ns=%llu "
	       "elapsed_ns=%llu max_stopped_ns=%llu engine=%s discovery=%s nholders=%ld "
	       "holders_cut=%zu refs=%zu refs_cut=%zu left=%zu exit=%d\n",
	       variant, n, mode_names[m], run, ok, (unsigned long long)o.wall_ns,
	       (unsigned long long)o.elapsed_ns, (unsigned long long)o.max_stopped_ns,
	       o.engine[0] ? o.engine : "-", o.discovery[0] ? o.discovery : "-", o.nholders,
	       o.holders_cut, o.refs, o.refs_cut, o.left, o.exit);
	printf("NATIVE-STEPS variant=%s holders=%d mode=%s run=%d ok=%d", variant, n, mode_names[m],
	       run, ok);
	for (size_t i = 0; i < NSTEPS; i++)
		printf(" %s=%llu", steps[i], (unsigned long long)o.step_ns[i]);
	printf("\n");
	holders_stop(&h);
	unlink(target);
	return ok;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

int main(void)
{
	char *counts = strdup(env_or("NATIVE_HOLDERS", "10,100,1000"));
	char *variants = strdup(env_or("NATIVE_VARIANTS", "fd,map"));
	int runs = atoi(env_or("NATIVE_RUNS", "3")), failed = 0;
	struct rlimit rl = {65536, 65536};
	char *sv, *sc, clock[32];
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Room for the holders' pidfds the revoke keeps, as bench/run gives. */
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* What the guest's clock reads (tsc under -icount counts instructions). */
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f || !fgets(clock, sizeof(clock), f))
		strcpy(clock, "unknown");
	clock[strcspn(clock, "\n")] = '\0';
	if (f)
		fclose(f);
	printf("NATIVE-GUEST cpus=%ld clocksource=%s revokeat=%ld runs=%d holders=%s "
	       "variants=%s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), clock, revokeat_nr(), runs, counts, variants);
	if (!counts || !variants || runs <= 0)
		return 2;
	for (char *v = strtok_r(variants, ",", &sv); v; v = strtok_r(NULL, ",", &sv)) {
		if (strcmp(v, "fd") != 0 && strcmp(v, "map") != 0) {
			printf("NATIVE-FAIL unknown variant %s\n", v);
			return 2;
		}
		char *copy = strdup(counts);

		for (char *c = strtok_r(copy, ",", &sc); c; c = strtok_r(NULL, ",", &sc)) {
			int n = atoi(c);

			if (n <= 0) {
				printf("NATIVE-FAIL bad holder count %s\n", c);
				return 2;
			}
			/* The modes alternate, and the first of a run rotates,
			 * so whatever drifts in the guest (page cache, slabs,
			 * pid numbers) touches every mode alike. */
			for (int r = 0; r < runs; r++)
				for (int k = 0; k < NMODES; k++)
					failed += !one_run(v, n, (enum mode)((k + r) % NMODES), r);
		}
		free(copy);
	}
	free(counts);
	free(variants);
	printf("NATIVE-DONE failed=%d\n", failed);
	return failed ? 1 : 0;
}
