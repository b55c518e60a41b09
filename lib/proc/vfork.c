/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vfork parents. A thread in vfork() sleeps uninterruptibly (state D) until
 * its child execs or exits: PTRACE_INTERRUPT cannot stop it, and the child,
 * which has a copy of the parent's descriptors and shares its memory, is
 * usually a holder too. Stopping the child would keep the parent waiting for
 * good, so the engine waits for such parents before it stops anyone
 * (engine.c), and names the child when the wait runs out.
 *
 * The child is the process whose parent is PID and that shares PID's memory
 * (kcmp KCMP_VM): /proc/PID/task/TID/children when the kernel has it
 * (CONFIG_PROC_CHILDREN), else every process's stat.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static bool shares_vm(pid_t pid, pid_t child)
{
	return child != pid && syscall(SYS_kcmp, pid, child, KCMP_VM, 0, 0) == 0;
}

/* Through /proc/PID/task/TID/children: 1 with *RET, 0 none, -ENOENT
 * without that file. */
static int child_listed(pid_t pid, pid_t tid, pid_t *ret)
{
	char name[64], buf[4096], *p, *save = NULL;
	int r;

	snprintf(name, sizeof(name), "/proc/%d/task/%d/children", pid, tid);
	r = read_text_at(AT_FDCWD, name, buf, sizeof(buf));
	if (r < 0)
		return r;
	for (p = strtok_r(buf, " \n", &save); p; p = strtok_r(NULL, " \n", &save)) {
		int c;

		if (rv_parse_int(p, &c) == 0 && shares_vm(pid, c)) {
			*ret = c;
			return 1;
		}
	}
	return 0;
}

static int child_scanned(pid_t pid, pid_t *ret)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!d)
		return negative_errno();
	while (!found && (de = readdir(d))) {
		struct rv_proc_stat st;
		char name[300], buf[1024];
		int c;

		if (rv_parse_int(de->d_name, &c) < 0 || c == pid)
			continue;
		snprintf(name, sizeof(name), "/proc/%s/stat", de->d_name);
		if (read_text_at(AT_FDCWD, name, buf, sizeof(buf)) < 0 ||
		    rv_parse_stat(buf, &st) < 0)
			continue;
		if (st.ppid == pid && shares_vm(pid, c)) {
			*ret = c;
			found = 1;
		}
	}
	closedir(d);
	return found;
}

int rv_vfork_parent(pid_t pid, pid_t tid, char *ret_state, pid_t *ret_child)
{
	struct rv_proc_stat st;
	char name[64], buf[1024];
	pid_t child = 0;
	int r;

	/* The child found last time, still sharing the memory: no search. */
	if (*ret_child > 0 && !shares_vm(pid, *ret_child))
		*ret_child = 0;
	snprintf(name, sizeof(name), "/proc/%d/task/%d/stat", pid, tid);
	r = read_text_at(AT_FDCWD, name, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	r = rv_parse_stat(buf, &st);
	if (r < 0)
		return r;
	*ret_state = st.state;
	if (st.state != 'D')
		return 0;
	if (*ret_child > 0)
		return 1;
	r = child_listed(pid, tid, &child);
	if (r == -ENOENT)
		r = child_scanned(pid, &child);
	if (r <= 0)
		return r;
	*ret_child = child;
	return 1;
}
