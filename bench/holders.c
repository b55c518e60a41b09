/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-holders: start the holder processes of a benchmark and keep them
 * until told to go.
 *
 *   bench-holders --target FILE --procs N --fds M [--noise DIR] [--map-only K]
 *                 [--no-map] [--cwd DIR --cwd-every K] --pidfile FILE
 *
 * Each of the N children (its own, single-threaded, PR_SET_PDEATHSIG) opens
 * M descriptors: one on FILE and M-1 on the files of DIR (round robin; or
 * /dev/null), and maps the first page of FILE (MAP_SHARED, read-only),
 * unless --no-map. One child in K (--map-only) holds FILE through the
 * mapping only; one in K (--cwd-every, another one) also has its working
 * directory in DIR (--cwd), the third kind of reference a forced unmount
 * cuts. When all are set up, the pids go to the pid file and "ready N" to
 * stdout. On EOF on stdin, SIGTERM, SIGINT or SIGHUP every child is killed
 * by its pid and reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t *pids;
static size_t npids;

static void kill_all(void)
{
	for (size_t i = 0; i < npids; i++)
		kill(pids[i], SIGKILL);
	for (size_t i = 0; i < npids; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	npids = 0;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-holders: %s: %s\n", what, strerror(errno));
	kill_all();
	exit(1);
}

static void on_signal(int sig)
{
	(void)sig;
}

static void __attribute__((noreturn))
child(const char *target, int fds, char **noise, size_t nnoise, int has_fd, int map,
      const char *cwd, int ready)
{
	char c = 'r';
	int fd, devnull;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(2);
	devnull = open("/dev/null", O_RDWR);
	if (devnull < 0)
		_exit(2);
	dup2(devnull, 0);
	dup2(devnull, 1);
	close(devnull);
	fd = open(target, O_RDONLY);
	if (fd < 0)
		_exit(3);
	if (map && mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		_exit(4);
	if (!has_fd)
		close(fd);
	if (cwd && chdir(cwd) < 0)
		_exit(7);
	for (int i = has_fd ? 1 : 0; i < fds; i++)
		if (open(nnoise ? noise[(size_t)i % nnoise] : "/dev/null", O_RDONLY) < 0)
			_exit(5);
	if (write(ready, &c, 1) != 1)
		_exit(6);
	close(ready);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"target", required_argument, NULL, 't'},	 {"procs", required_argument, NULL, 'n'},
	    {"fds", required_argument, NULL, 'm'},	 {"noise", required_argument, NULL, 'd'},
	    {"map-only", required_argument, NULL, 'k'},	 {"no-map", no_argument, NULL, 'M'},
	    {"pidfile", required_argument, NULL, 'p'},	 {"cwd", required_argument, NULL, 'c'},
	    {"cwd-every", required_argument, NULL, 'C'}, {0}};
	const char *target = NULL, *noise_dir = NULL, *pidfile = NULL, *cwd = NULL;
	int procs = 100, fds = 64, map_only = 0, map = 1, cwd_every = 0, c, p[2];
	char **noise = NULL, buf[64];
	size_t nnoise = 0;
	struct rlimit rl;
	FILE *f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			target = optarg;
			break;
		case 'n':
			procs = atoi(optarg);
			break;
		case 'm':
			fds = atoi(optarg);
			break;
		case 'd':
			noise_dir = optarg;
			break;
		case 'k':
			map_only = atoi(optarg);
			break;
		case 'M':
			map = 0;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'c':
			cwd = optarg;
			break;
		case 'C':
			cwd_every = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!target || !pidfile || procs <= 0 || fds <= 0) {
		fprintf(stderr, "usage: bench-holders --target FILE --procs N --fds M "
				"[--noise DIR] [--map-only K] [--no-map] [--cwd DIR --cwd-every K] "
				"--pidfile FILE\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)fds + 16) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)fds + 16 ? rl.rlim_max : (rlim_t)fds + 16;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (noise_dir) {
		DIR *d = opendir(noise_dir);
		struct dirent *e;

		if (!d)
			die(noise_dir);
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			noise = realloc(noise, (nnoise + 1) * sizeof(*noise));
			if (!noise || asprintf(&noise[nnoise], "%s/%s", noise_dir, e->d_name) < 0)
				die("memory");
			nnoise++;
		}
		closedir(d);
	}
	pids = calloc((size_t)procs, sizeof(*pids));
	if (!pids || pipe2(p, O_CLOEXEC) < 0)
		die("setup");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(p[0]);
			child(target, fds, noise, nnoise, !(map_only > 0 && i % map_only == 0), map,
			      cwd && cwd_every > 0 && i % cwd_every == cwd_every - 1 ? cwd : NULL,
			      p[1]);
		}
		pids[npids++] = pid;
	}
	close(p[1]);
	for (int i = 0; i < procs; i++) {
		char r;

		if (read(p[0], &r, 1) != 1) {
			errno = ECHILD;
			die("a holder failed to start");
		}
	}
	f = fopen(pidfile, "we");
	if (!f)
		die(pidfile);
	for (size_t i = 0; i < npids; i++)
		fprintf(f, "%d\n", pids[i]);
	if (fclose(f) != 0)
		die(pidfile);
	printf("ready %zu\n", npids);
	fflush(stdout);
	/* Until EOF on stdin or a signal (read fails with EINTR). */
	while (read(0, buf, sizeof(buf)) > 0)
		;
	kill_all();
	return 0;
}
