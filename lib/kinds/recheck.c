/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holders who may no longer hold the file (REVOKE_RECHECK): permissions are
 * checked at open only, so after a chmod, chown or ACL change the processes
 * that opened it before keep what they could no longer get. Which ones is
 * the kernel's to say, not ours to re-implement (ACLs, capabilities, the
 * filesystem's own permission method): a child of ours takes a holder's
 * uids, gids, groups and effective capabilities (those a permission check
 * consults) with the raw system calls
 * (the child is alone in its process: glibc's set*id would signal threads
 * it no longer has) and asks faccessat2(AT_EACCESS | AT_EMPTY_PATH) about
 * our descriptor of the target, for read, write and search, writing one
 * byte per answer into a pipe. Decided before anyone is stopped: a holder
 * still allowed everything it holds is never stopped.
 *
 * What the child cannot take is not taken: an LSM label (an open may be
 * refused by SELinux or AppArmor where the modes allow it), a holder's user
 * namespace (its capabilities count in its namespace, and its ids are read
 * as ours map them), an O_PATH descriptor (opened with no permission).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kinds/recheck.h"

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* The capabilities a permission check consults (generic_permission():
 * DAC_OVERRIDE, DAC_READ_SEARCH; FOWNER for an owner's ACL change): only
 * these of a holder's are taken, so that a root holder's full set need not
 * be ours (revoked keeps a few). */
#define PERMISSION_CAPS                                                                            \
	((1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_FOWNER))

/* One answer byte per target and mode (R_OK, W_OK, X_OK). */
enum { ANS_ALLOWED = 'y', ANS_DENIED = 'n', ANS_UNKNOWN = '?' };
static const int modes[3] = {R_OK, W_OK, X_OK};

struct rv_recheck_entry {
	pid_t pid;
	char *answers; /* 3 per target */
};

int rv_recheck_init(struct rv_recheck *rc, const int *fds, size_t n)
{
	int *copy = calloc(n ? n : 1, sizeof(int));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, fds, n * sizeof(int));
	*rc = (struct rv_recheck){.fds = copy, .ntargets = n};
	return 0;
}

void rv_recheck_done(struct rv_recheck *rc)
{
	for (size_t i = 0; i < rc->n; i++)
		free(rc->v[i].answers);
	free(rc->v);
	free(rc->fds);
	*rc = (struct rv_recheck){0};
}

/* The child: become C, answer, exit. Raw system calls only (we are a fork
 * of a threaded process). Exits with the errno of a step that failed. */
static void __attribute__((noreturn))
child(const struct rv_proc_creds *c, bool groups, const int *fds, size_t n, int out)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	uint64_t eff = c->cap_eff & PERMISSION_CAPS;
	char buf[3 * 64];

	if (syscall(SYS_prctl, PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0 ||
	    (groups && syscall(SYS_setgroups, c->ngroups, c->groups) < 0) ||
	    syscall(SYS_setresgid, c->gid[0], c->gid[1], c->gid[2]) < 0 ||
	    syscall(SYS_setresuid, c->uid[0], c->uid[1], c->uid[2]) < 0)
		_exit(errno & 0x7f ?: 1);
	/* setfs*id answer with the old value: asked again to know. */
	(void)syscall(SYS_setfsgid, c->gid[3]);
	(void)syscall(SYS_setfsuid, c->uid[3]);
	if ((gid_t)syscall(SYS_setfsgid, -1) != c->gid[3] ||
	    (uid_t)syscall(SYS_setfsuid, -1) != c->uid[3])
		_exit(EPERM);
	/* Its effective set, from what we keep permitted: one we do not have
	 * cannot be given, and is not guessed at. */
	if (syscall(SYS_capget, &hdr, data) < 0)
		_exit(errno & 0x7f ?: 1);
	if ((eff & ~((uint64_t)data[1].permitted << 32 | data[0].permitted)) != 0)
		_exit(EPERM);
	data[0].effective = (uint32_t)eff;
	data[1].effective = (uint32_t)(eff >> 32);
	if (syscall(SYS_capset, &hdr, data) < 0)
		_exit(errno & 0x7f ?: 1);
	for (size_t t = 0; t < n; t += 64) {
		size_t k = 0;

		for (size_t i = t; i < n && i < t + 64; i++)
			for (size_t m = 0; m < 3; m++) {
				long r = syscall(SYS_faccessat2, fds[i], "", modes[m],
						 AT_EACCESS | AT_EMPTY_PATH);

				buf[k++] = r == 0	     ? ANS_ALLOWED
					   : errno == EACCES ? ANS_DENIED
							     : ANS_UNKNOWN;
			}
		if (write(out, buf, k) != (ssize_t)k)
			_exit(EIO);
	}
	_exit(0);
}

/* Reads N bytes from FD by DEADLINE: 0, -ETIMEDOUT, or -EPIPE (short). */
static int read_answers(int fd, char *buf, size_t n, uint64_t deadline)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = rv_now_ns();
		ssize_t k;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) < 0 && errno != EINTR)
			return negative_errno();
		k = read(fd, buf + got, n - got);
		if (k == 0)
			return -EPIPE;
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return negative_errno();
		if (k > 0)
			got += (size_t)k;
	}
	return 0;
}

/* The kernel's answers for C about every target, into ANSWERS (3 per
 * target): 0 or -errno (the credentials could not be taken, or time ran
 * out: the child is killed). */
static int ask_as(const struct rv_recheck *rc, const struct rv_proc_creds *c, char *answers,
		  uint64_t deadline)
{
	gid_t ours[RV_CREDS_MAX_GROUPS];
	int n = getgroups(RV_CREDS_MAX_GROUPS, ours), p[2], st = 0, r;
	bool groups = n < 0 || (size_t)n != c->ngroups ||
		      memcmp(ours, c->groups, c->ngroups * sizeof(gid_t)) != 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return negative_errno();
	pid = fork();
	if (pid < 0) {
		r = negative_errno();
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		child(c, groups, rc->fds, rc->ntargets, p[1]);
	}
	close(p[1]);
	r = read_answers(p[0], answers, 3 * rc->ntargets, deadline);
	close(p[0]);
	if (r == -ETIMEDOUT)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r == -EPIPE && WIFEXITED(st) && WEXITSTATUS(st))
		r = -WEXITSTATUS(st);
	return r;
}

/* The answers for holder PID (cached): -ESRCH when it is gone, -errno when
 * its credentials cannot be read or taken. */
static int answers_of(struct rv_recheck *rc, pid_t pid, uint64_t deadline, const char **ret)
{
	_cleanup_free_ char *a = NULL;
	struct rv_recheck_entry *v;
	struct rv_proc_creds c;
	int r;

	for (size_t i = 0; i < rc->n; i++)
		if (rc->v[i].pid == pid) {
			*ret = rc->v[i].answers;
			return 0;
		}
	r = rv_proc_creds_of(pid, &c);
	if (r < 0)
		return r;
	a = malloc(3 * rc->ntargets + 1);
	if (!a)
		return -ENOMEM;
	r = ask_as(rc, &c, a, deadline);
	if (r < 0)
		return r;
	v = realloc(rc->v, (rc->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	rc->v = v;
	v[rc->n] = (struct rv_recheck_entry){.pid = pid, .answers = TAKE_PTR(a)};
	*ret = v[rc->n++].answers;
	return 0;
}

/* The modes REF was made with (R_OK, W_OK, X_OK), 0 for none (O_PATH), -1
 * when discovery does not show it. */
static int ref_modes(const struct revoke_ref *ref)
{
	switch (ref->type) {
	case REVOKE_REF_FD:
		if (ref->open_flags & O_PATH)
			return 0;
		return (ref->open_flags & O_ACCMODE) == O_RDONLY   ? R_OK
		       : (ref->open_flags & O_ACCMODE) == O_WRONLY ? W_OK
								   : R_OK | W_OK;
	case REVOKE_REF_MAP:
		/* Any mapping needs a descriptor open for reading; a shared
		 * writable one, for writing too. */
		return R_OK |
		       ((ref->map_flags & MAP_SHARED) && (ref->prot & PROT_WRITE) ? W_OK : 0);
	case REVOKE_REF_CWD:
	case REVOKE_REF_ROOT:
	case REVOKE_REF_EXE:
		return X_OK;
	default:
		return -1;
	}
}

/* Whether every mode of MODES is allowed for target T by ANSWERS: 1, 0, or
 * -1 when the kernel gave no clear answer. */
static int allowed(const char *answers, unsigned int t, int want)
{
	int verdict = 1;

	for (size_t m = 0; m < 3; m++) {
		char a = answers[3 * t + m];

		if (!(want & modes[m]))
			continue;
		if (a == ANS_DENIED)
			return 0;
		if (a != ANS_ALLOWED)
			verdict = -1;
	}
	return verdict;
}

int rv_recheck_narrow(struct rv_recheck *rc, struct rv_holder *h, uint64_t deadline, char *why,
		      size_t size)
{
	const char *answers;
	size_t k = 0;
	int r = answers_of(rc, h->self ? getpid() : h->pub.pid, deadline, &answers);

	if (r == -ENOENT)
		return -ESRCH;
	if (r < 0) {
		/* Its credentials could not be asked about: not guessed. */
		snprintf(why, size, "cannot ask the kernel as its credentials: %s", strerror(-r));
		return r;
	}
	for (size_t j = 0; j < h->pub.nrefs; j++) {
		struct revoke_ref *ref = &h->pub.refs[j];
		int want = ref_modes(ref), ok;

		if (want == 0 || ref->target >= rc->ntargets)
			continue;
		if (want < 0)
			ref->state = REVOKE_STATE_UNKNOWN; /* reported, never guessed */
		else if ((ok = allowed(answers, ref->target, want)) > 0)
			continue; /* still allowed: not ours to cut */
		else if (ok < 0)
			return -EIO;
		h->pub.refs[k++] = *ref;
	}
	h->pub.nrefs = k;
	return 0;
}
