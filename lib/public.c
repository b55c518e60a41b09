/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public edge: the only place that converts -errno into -1/errno. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "helper/proto.h"
#include "internal.h"

/* Flags this version understands. */
#define RV_KNOWN_FLAGS                                                                             \
	(REVOKE_BEST_EFFORT | REVOKE_NOFOLLOW | REVOKE_LIST_ONLY | REVOKE_NO_HANGUP |              \
	 REVOKE_ENGINE_USERSPACE | REVOKE_ENGINE_NATIVE | REVOKE_DISCOVERY_PROC |                  \
	 REVOKE_DISCOVERY_BPF | REVOKE_MOUNT | REVOKE_UMOUNT | REVOKE_NO_SUBMOUNTS |               \
	 REVOKE_HELPER | REVOKE_NO_HELPER | REVOKE_DESCRIPTION | REVOKE_RECHECK)

static int set_errno(int r)
{
	if (r >= 0)
		return 0;
	errno = -r;
	return -1;
}

/* The bound of a call that names none: 5 s, or REVOKE_TIMEOUT seconds from
 * the environment (a slow or loaded machine; the test suite sets it). */
static int default_timeout_ms(void)
{
	const char *env = getenv("REVOKE_TIMEOUT");
	char *end;
	long v;

	if (!env || !*env)
		return RV_DEFAULT_TIMEOUT_MS;
	errno = 0;
	v = strtol(env, &end, 10);
	if (errno || *end || v <= 0 || v > 3600)
		return RV_DEFAULT_TIMEOUT_MS;
	return (int)v * 1000;
}

/* Whether NAME is set to something other than "" or "0". */
static bool env_set(const char *name)
{
	const char *v = secure_getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/* Reads OPTS the way libbpf reads its option structs: a caller built against
 * an older, smaller struct is fine; a newer, larger one must have zeroes
 * beyond what this version knows. */
static int read_opts(const struct revoke_opts *opts, struct rv_request *req)
{
	struct revoke_opts o = {.sz = sizeof(o), .keep_fd = -1};

	if (opts) {
		if (opts->sz < offsetof(struct revoke_opts, flags) + sizeof(opts->flags))
			return -EINVAL;
		if (opts->sz > sizeof(o)) {
			const char *tail = (const char *)opts + sizeof(o);
			for (size_t i = 0; i < opts->sz - sizeof(o); i++)
				if (tail[i])
					return -E2BIG;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
		if (opts->sz < offsetof(struct revoke_opts, keep_fd) + sizeof(opts->keep_fd))
			o.keep_fd = -1;
	}
	if (o.flags & ~RV_KNOWN_FLAGS)
		return -EINVAL;
	if ((o.flags & REVOKE_ENGINE_USERSPACE) && (o.flags & REVOKE_ENGINE_NATIVE))
		return -EINVAL;
	if ((o.flags & REVOKE_DISCOVERY_PROC) && (o.flags & REVOKE_DISCOVERY_BPF))
		return -EINVAL;
	if (o.flags & REVOKE_UMOUNT)
		o.flags |= REVOKE_MOUNT;
	if ((o.flags & REVOKE_NO_SUBMOUNTS) && !(o.flags & REVOKE_MOUNT))
		return -EINVAL;
	if (o.timeout_ms < 0 || o.keep_fd < -1 || o.ns_pid < 0)
		return -EINVAL;
	/* A mount point in another namespace would need its mount table,
	 * which libmount reads from /proc/self. */
	if (o.ns_pid && (o.flags & REVOKE_MOUNT))
		return -EINVAL;
	if ((o.flags & REVOKE_HELPER) && (o.flags & (REVOKE_NO_HELPER | REVOKE_MOUNT)))
		return -EINVAL;
	/* The environment's choice where the caller made none (secure_getenv:
	 * a set-uid program's user does not choose for it). */
	if (!(o.flags & (REVOKE_HELPER | REVOKE_NO_HELPER | REVOKE_MOUNT))) {
		if (env_set("REVOKE_NO_HELPER"))
			o.flags |= REVOKE_NO_HELPER;
		else if (env_set("REVOKE_HELPER"))
			o.flags |= REVOKE_HELPER;
	}

	/* The selection (1.4): bounded, and a process is a holder of a file,
	 * not of a mount. */
	if (o.npids > RV_SELECT_MAX || o.nuids > RV_SELECT_MAX)
		return -E2BIG;
	if ((o.npids && !o.pids) || (o.nuids && !o.uids))
		return -EFAULT;
	for (size_t i = 0; i < o.npids; i++)
		if (o.pids[i] <= 0)
			return -EINVAL;
	if (o.cgroup && !*o.cgroup)
		return -EINVAL;
	req->pids = o.pids;
	req->npids = o.npids;
	req->uids = o.uids;
	req->nuids = o.nuids;
	req->cgroup = o.cgroup;
	if (rv_request_selects(req) && (o.flags & REVOKE_MOUNT))
		return -EINVAL;
	/* 1.5: a description or a recheck narrows a file's holders, not a
	 * mount's; and each answers a question of its own. */
	if ((o.flags & (REVOKE_DESCRIPTION | REVOKE_RECHECK)) &&
	    ((o.flags & REVOKE_MOUNT) || (o.flags & (REVOKE_DESCRIPTION | REVOKE_RECHECK)) ==
					     (REVOKE_DESCRIPTION | REVOKE_RECHECK)))
		return -EINVAL;

	req->flags = o.flags;
	req->timeout_ms = o.timeout_ms ? o.timeout_ms : default_timeout_ms();
	req->keep_fd = o.keep_fd;
	req->ns_pid = o.ns_pid;
	return 0;
}

_public_ int revoke_ex(const char *const *paths, size_t npaths, const struct revoke_opts *opts,
		       struct revoke_report **ret_report)
{
	struct rv_request req = {.paths = paths, .npaths = npaths, .fd = -1};
	struct revoke_report *report = NULL;
	int r;

	if (ret_report)
		*ret_report = NULL;
	if (npaths == 0)
		return set_errno(-EINVAL);
	if (!paths)
		return set_errno(-EFAULT);
	r = read_opts(opts, &req);
	if (r < 0)
		return set_errno(r);
	/* A path names a file, not one of its open file descriptions. */
	if (req.flags & REVOKE_DESCRIPTION)
		return set_errno(-EINVAL);

	r = rv_helper_or_engine(&req, ret_report ? &report : NULL);
	if (ret_report)
		*ret_report = report;
	return set_errno(r);
}

_public_ int frevoke_ex(int fd, const struct revoke_opts *opts, struct revoke_report **ret_report)
{
	struct rv_request req = {.fd = fd};
	struct revoke_report *report = NULL;
	int r;

	if (ret_report)
		*ret_report = NULL;
	if (fd < 0)
		return set_errno(-EBADF);
	r = read_opts(opts, &req);
	if (r < 0)
		return set_errno(r);
	/* A descriptor names a file, not a mount, and needs no namespace. */
	if ((req.flags & REVOKE_MOUNT) || req.ns_pid)
		return set_errno(-EINVAL);
	/* REVOKE_DESCRIPTION: FD's description is the target, kept by no one. */
	req.keep_fd = req.flags & REVOKE_DESCRIPTION ? -1 : fd;

	r = rv_helper_or_engine(&req, ret_report ? &report : NULL);
	if (ret_report)
		*ret_report = report;
	return set_errno(r);
}

_public_ int revoke(const char *path)
{
	return revoke_ex(&path, 1, NULL, NULL);
}

_public_ int frevoke(int fd)
{
	return frevoke_ex(fd, NULL, NULL);
}

_public_ void revoke_report_free(struct revoke_report *report)
{
	int saved = errno;

	rv_report_destroy(report);
	errno = saved;
}

static const char *name_of(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : NULL;
}

_public_ const char *revoke_ref_type_name(int type)
{
	static const char *const names[] = {
	    [REVOKE_REF_FD] = "fd",
	    [REVOKE_REF_MAP] = "map",
	    [REVOKE_REF_CWD] = "cwd",
	    [REVOKE_REF_ROOT] = "root",
	    [REVOKE_REF_EXE] = "exe",
	    [REVOKE_REF_URING] = "uring",
	    [REVOKE_REF_INFLIGHT] = "inflight",
	    [REVOKE_REF_SWAP] = "swap",
	    [REVOKE_REF_LOOP] = "loop",
	    [REVOKE_REF_MOUNT] = "mount",
	};
	return name_of(names, ARRAY_SIZE(names), type);
}

_public_ const char *revoke_state_name(int state)
{
	static const char *const names[] = {
	    [REVOKE_STATE_FOUND] = "found",
	    [REVOKE_STATE_CUT] = "cut",
	    [REVOKE_STATE_KEPT] = "kept",
	    [REVOKE_STATE_SKIPPED] = "skipped",
	    [REVOKE_STATE_FAILED] = "failed",
	    [REVOKE_STATE_UNREACHABLE] = "unreachable",
	    [REVOKE_STATE_UNINSPECTED] = "uninspected",
	    [REVOKE_STATE_UNKNOWN] = "unknown",
	};
	return name_of(names, ARRAY_SIZE(names), state);
}

_public_ const char *revoke_engine_name(int engine)
{
	return rv_engine_name(engine);
}

_public_ const char *revoke_discovery_name(int discovery)
{
	static const char *const names[] = {
	    [REVOKE_DISC_NONE] = "none",
	    [REVOKE_DISC_PROC] = "proc",
	    [REVOKE_DISC_BPF] = "bpf",
	};
	return name_of(names, ARRAY_SIZE(names), discovery);
}

_public_ const char *revoke_phase_name(int phase)
{
	static const char *const names[] = {
	    [REVOKE_PHASE_NONE] = "none",	  [REVOKE_PHASE_RESOLVE] = "resolving",
	    [REVOKE_PHASE_LOCK] = "waiting",	  [REVOKE_PHASE_SCAN] = "scanning",
	    [REVOKE_PHASE_STOP] = "stopping",	  [REVOKE_PHASE_CUT] = "cutting",
	    [REVOKE_PHASE_RELEASE] = "releasing", [REVOKE_PHASE_SYNC] = "syncing",
	    [REVOKE_PHASE_UMOUNT] = "unmounting",
	};
	return name_of(names, ARRAY_SIZE(names), phase);
}

_public_ const char *revoke_step_name(int step)
{
	static const char *const names[] = {
	    [REVOKE_STEP_START] = "start",     [REVOKE_STEP_RESOLVE] = "resolve",
	    [REVOKE_STEP_LOCK] = "lock",       [REVOKE_STEP_SCAN] = "scan",
	    [REVOKE_STEP_STOP] = "stop",       [REVOKE_STEP_RESCAN] = "rescan",
	    [REVOKE_STEP_PLACE] = "place",     [REVOKE_STEP_CUT] = "cut",
	    [REVOKE_STEP_RELEASE] = "release", [REVOKE_STEP_SYNC] = "sync",
	    [REVOKE_STEP_UMOUNT] = "umount",   [REVOKE_STEP_REPORT] = "report",
	};
	return name_of(names, ARRAY_SIZE(names), step);
}

/* A 1.0 report has no sz: it is the library's own, the 1.0 sizes. */
static size_t holder_size(const struct revoke_report *r)
{
	return r->sz >= offsetof(struct revoke_report, holder_size) + sizeof(size_t) &&
		       r->holder_size
		   ? r->holder_size
		   : sizeof(struct revoke_holder);
}

static size_t ref_size(const struct revoke_report *r)
{
	return r->sz >= offsetof(struct revoke_report, ref_size) + sizeof(size_t) && r->ref_size
		   ? r->ref_size
		   : sizeof(struct revoke_ref);
}

_public_ const struct revoke_holder *revoke_report_holder(const struct revoke_report *report,
							  size_t i)
{
	if (!report || i >= report->nholders)
		return NULL;
	return (const struct revoke_holder *)(const void *)((const char *)report->holders +
							    i * holder_size(report));
}

_public_ const struct revoke_ref *revoke_report_ref(const struct revoke_report *report,
						    const struct revoke_holder *h, size_t j)
{
	if (!report || !h || j >= h->nrefs)
		return NULL;
	return (const struct revoke_ref *)(const void *)((const char *)h->refs +
							 j * ref_size(report));
}

_public_ const char *revoke_version(void)
{
	return REVOKE_VERSION_STRING;
}
