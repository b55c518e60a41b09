/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest's /init: mounts what the tests need, runs the series' kselftest
 * /bin/revoke_test (TAP output; or, with REVOKE_BENCH=1 on the kernel command
 * line, /bin/revoke-bench) and /bin/native-test (lib/native/native.c against this
 * kernel), then every program listed in /extra/run (one per line) with /bin on
 * PATH, prints the final marker and powers off. With REVOKE_BENCH=extra
 * (run-tests --icount) only the programs of /extra/run: a measurement's guest
 * time is theirs. kernel/run-tests decides from this output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(const char *label, char *const argv[])
{
	int status;
	pid_t pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		printf("exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (label) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			printf("PASS extra %s\n", label);
		else if (WIFEXITED(status))
			printf("FAIL extra %s: exit status %d\n", label, WEXITSTATUS(status));
		else
			printf("FAIL extra %s: signal %d\n", label, WTERMSIG(status));
	}
	return status;
}

int main(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mkdir("/run", 0755); /* librevoke's lock file (lib/lock.c) */
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", 0, "ptmxmode=0666");
	symlink("pts/ptmx", "/dev/ptmx");
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	setenv("PATH", "/bin:/extra", 1);
	/* Shared libraries of dynamic extra programs (kernel/run-tests). */
	setenv("LD_LIBRARY_PATH", "/usr/lib/revoke-guest", 1);
	/* The default bound of a revoke (5 s) is for real machines: under
	 * TCG, with the host busy, a scan of a few hundred processes can take
	 * longer. The host suite sets 20 s for the same reason (tests/run-tests). */
	setenv("REVOKE_TIMEOUT", "30", 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("REVOKE-GUEST-START cpus=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));

	const char *bench = getenv("REVOKE_BENCH");
	bool extra_only = bench && strcmp(bench, "extra") == 0;
	if (bench && strcmp(bench, "1") == 0) {
		char *argv[] = {"/bin/revoke-bench", NULL};
		run(NULL, argv);
	} else {
		char *argv[] = {"/bin/revoke_test", NULL};
		if (!extra_only)
			run(NULL, argv);
		if (!extra_only && access("/bin/native-test", X_OK) == 0) {
			/* lib/native/native.c against this kernel, whichever engine the
			 * suite is told to use (REVOKE_ENGINE=ptrace from the
			 * kernel command line: kernel/run-tests --userspace). */
			char *nargv[] = {"/bin/native-test", NULL};
			char *engine = getenv("REVOKE_ENGINE");

			engine = engine ? strdup(engine) : NULL;
			unsetenv("REVOKE_ENGINE");
			run(NULL, nargv);
			if (engine)
				setenv("REVOKE_ENGINE", engine, 1);
			free(engine);
		}
		FILE *f = fopen("/extra/run", "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!*line)
				continue;
			char path[600];
			snprintf(path, sizeof(path), "/extra/%s", line);
			printf("# running extra program %s\n", line);
			char *xargv[] = {path, NULL};
			chdir("/tmp");
			run(line, xargv);
		}
	}
	printf("REVOKE-GUEST-DONE\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
