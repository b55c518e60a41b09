/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "device.h"
#include "harness.h"

/* The pid of a process whose descriptor is a node of RDEV, or 0. */
static pid_t holder_of(dev_t rdev)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	CHECK(d, "opendir /proc: %m");
	while (!found && (e = readdir(d))) {
		char dir[300], path[600];
		struct dirent *f;
		DIR *fds;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/fd", e->d_name);
		fds = opendir(dir); /* gone, or not ours to read: cannot say */
		if (!fds)
			continue;
		while (!found && (f = readdir(fds))) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", dir, f->d_name);
			if (stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev)
				found = (pid_t)atoi(e->d_name);
		}
		closedir(fds);
	}
	closedir(d);
	return found;
}

dev_t test_unheld_device(void)
{
	struct stat st;
	pid_t pid;

	if (stat(TEST_DEVICE, &st) < 0 || !S_ISCHR(st.st_mode))
		SKIP("no %s here", TEST_DEVICE);
	pid = holder_of(st.st_rdev);
	if (pid)
		SKIP("pid %d holds %s: a revoke of the device would cut it", (int)pid, TEST_DEVICE);
	return st.st_rdev;
}
