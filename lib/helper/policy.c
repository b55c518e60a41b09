/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helper's client policy (policy.h). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/policy.h"

/* What a client may ask for. Mounts are not files one owns; helper flags
 * mean nothing here. */
#define CLIENT_FLAGS                                                                               \
	(REVOKE_BEST_EFFORT | REVOKE_NOFOLLOW | REVOKE_LIST_ONLY | REVOKE_NO_HANGUP |              \
	 REVOKE_ENGINE_USERSPACE | REVOKE_ENGINE_NATIVE | REVOKE_DISCOVERY_PROC |                  \
	 REVOKE_DISCOVERY_BPF | REVOKE_DESCRIPTION | REVOKE_RECHECK)

int rv_helper_policy_request(const struct rv_helper_req *hr, uid_t uid, int *fds, size_t nfds,
			     unsigned int max_timeout_ms, struct rv_request *ret)
{
	unsigned int timeout_ms = hr->timeout_ms ? hr->timeout_ms : RV_DEFAULT_TIMEOUT_MS;

	if (hr->flags & ~CLIENT_FLAGS)
		return -EINVAL;
	/* A description is one descriptor's (frevoke_ex's), never a path's. */
	if ((hr->flags & REVOKE_DESCRIPTION) && (nfds != 1 || hr->keep != RV_HELPER_KEEP_NONE))
		return -EINVAL;
	*ret = (struct rv_request){
	    .fd = -1,
	    .keep_fd = hr->keep == RV_HELPER_KEEP_NONE ? -1 : fds[hr->keep],
	    .fds = fds,
	    .nfds = nfds,
	    .flags = hr->flags,
	    .timeout_ms = (int)(timeout_ms > max_timeout_ms ? max_timeout_ms : timeout_ms),
	    /* The engine checks that they are files (not anonymous inodes,
	     * not dead descriptors) the client owns. */
	    .for_client = true,
	    .client_uid = uid,
	    .pids = hr->pids,
	    .npids = hr->npids,
	    .uids = hr->uids,
	    .nuids = hr->nuids,
	    .cgroup = hr->cgroup[0] ? hr->cgroup : NULL,
	};
	return 0;
}

/* The client's command name, for the log only (the pid is SO_PEERCRED's,
 * from when it connected: a process that exited since shows "?"). */
static void client_comm(pid_t pid, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	snprintf(buf, size, "?");
	fd = rv_proc_open(pid, 0, O_RDONLY, "comm");
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	safe_close(fd);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	/* A name is the client's to choose: nothing of it reaches the log as
	 * a control character. */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* "dev M:m ino I path P" of each descriptor, as this process sees it. */
static void describe(const int *fds, size_t nfds, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < nfds && len < size; i++) {
		char path[512];
		struct statx stx;
		ssize_t n;
		int k;

		n = rv_proc_readlink(RV_PROC_SELF, 0, path, sizeof(path), "fd/%d", fds[i]);
		if (n < 0)
			snprintf(path, sizeof(path), "?");
		for (char *c = path; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (statx(fds[i], "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_UID,
			  &stx) < 0)
			k = snprintf(buf + len, size - len, "%sfd %s", i ? ", " : "", path);
		else
			k = snprintf(buf + len, size - len, "%sdev %u:%u ino %llu owner %u path %s",
				     i ? ", " : "", stx.stx_dev_major, stx.stx_dev_minor,
				     (unsigned long long)stx.stx_ino, stx.stx_uid, path);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static void outcome(int r, const struct revoke_report *rep, char *buf, size_t size)
{
	size_t holders = 0, cut = 0;

	if (rep)
		for (size_t i = 0; i < rep->nholders; i++) {
			const struct revoke_holder *h = &rep->holders[i];
			bool any = false;

			for (size_t j = 0; j < h->nrefs; j++) {
				cut += h->refs[j].state == REVOKE_STATE_CUT;
				any |= h->refs[j].state == REVOKE_STATE_CUT;
			}
			holders += any;
		}
	if (r == 0)
		snprintf(buf, size, "ok: %zu references cut in %zu processes (engine %s)", cut,
			 holders,
			 rep && rv_engine_name(rep->engine) ? rv_engine_name(rep->engine) : "none");
	else
		snprintf(buf, size, "failed: %s%s%s", strerror(-r),
			 rep && rep->failed_detail[0] ? ": " : "", rep ? rep->failed_detail : "");
}

void rv_helper_policy_log_files(pid_t pid, const int *fds, size_t nfds, char *comm, size_t csize,
				char *files, size_t fsize)
{
	client_comm(pid, comm, csize);
	describe(fds, nfds, files, fsize);
}

void rv_helper_policy_log_line(uid_t uid, pid_t pid, const char *comm, uint32_t flags,
			       const char *files, int r, const struct revoke_report *rep, char *buf,
			       size_t size)
{
	char result[256];

	outcome(r, rep, result, sizeof(result));
	snprintf(buf, size, "uid %u pid %d (%s): %s%s, flags 0x%x: %s", (unsigned int)uid, (int)pid,
		 comm, flags & REVOKE_LIST_ONLY ? "list " : "revoke ", files, flags, result);
}
