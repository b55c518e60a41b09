/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rv_scan_bpf: the holders of the targets through three BPF iterators
 * (revoke.bpf.c): task_file (descriptors), task_vma (mappings) and task
 * (cwd, root, exe), each sending a holder's identity the first time one
 * finds it. One read() pass over each iterator (load.c) replaces the /proc
 * scanner's open+statx per fd; its results are the same
 * (tests/unit/test-unit-bpf.c checks that on one load):
 *  - fd_flags/open_flags as fdinfo "flags:" shows them (f_flags, plus
 *    O_CLOEXEC when the fdtable's close_on_exec bit is set), offset f_pos;
 *  - mappings as /proc/PID/maps shows them (prot from VM_READ/WRITE/EXEC,
 *    MAP_SHARED iff VM_MAYSHARE, offset = vm_pgoff pages);
 *  - a thread group whose leader exited is seen through its first live
 *    thread, as the /proc scanner does through /proc/PID/task/TID;
 *  - uid, comm, seccomp, tracer, state and the pid in its own namespace
 *    from the leader, as in /proc/PID/status and stat.
 * io_uring fixed files and SCM_RIGHTS fds in flight are in no fd table: the
 * fd iterator flags the processes that have a ring or a unix socket with fds
 * queued, and only those are looked at through /proc (rv_scan_proc_pid).
 *
 * The fd fields come with the records, so RV_SCAN_NO_FDINFO changes nothing
 * here. Holders whose identity no pass delivered (more than
 * RV_BPF_MAX_HOLDERS) get it from /proc/PID/stat and status.
 *
 * Matching compares the kernel's (i_sb->s_dev, i_ino) with the target's
 * stat(); on btrfs subvolumes and some FUSE/network filesystems getattr
 * reports another st_dev. The targets' own O_PATH descriptors, in this
 * process, are looked for in the fd pass: if one is missing, the identities
 * differ and the scan gives way to /proc (-EOPNOTSUPP).
 *
 * The programs come as a light skeleton (load.c). That needs BTF,
 * BPF_PROG_TYPE_SYSCALL with in-kernel CO-RE (5.17), the task, task_file and
 * task_vma iterators, and a caller allowed to load tracing programs (CAP_BPF
 * + CAP_PERFMON, or CAP_SYS_ADMIN; no lockdown in confidentiality mode).
 * Any of those missing is -EOPNOTSUPP or -EPERM, on which rv_scan falls back
 * to /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load.h"
#include "discover/proc.h"
#include "kinds/refkind.h"
#include "kinds/target.h"

#define VM_READ	    0x1UL
#define VM_WRITE    0x2UL
#define VM_EXEC	    0x4UL
#define VM_MAYSHARE 0x80UL

/* Per new holder: which thread each pass took its records from. */
struct bpf_holder {
	pid_t tid[RV_BPF_NPASS];
	bool info;
	bool candidate;
	bool rescan;	       /* a target may be behind a file the iterators cannot tell */
	struct rv_bpf_rec rec; /* the INFO record */
};

struct bpf_scan {
	const struct rv_target *targets;
	size_t ntargets;
	const struct rv_scan_opts *opts;
	pid_t self;
	long pagesize;
	struct rv_holders hs; /* new holders, moved to the caller's list at the end */
	struct bpf_holder *bh;
	size_t bh_cap;
	/* tgid -> index + 1 in hs, open addressing */
	int *slots;
	size_t nslots;
	/* the self records of each target's O_PATH fd, to validate identities */
	bool *seen_path_fd;
};

static void bpf_scan_done(struct bpf_scan *s)
{
	rv_holders_free(&s->hs);
	free(s->bh);
	free(s->slots);
	free(s->seen_path_fd);
}

static size_t slot_of(const struct bpf_scan *s, pid_t tgid)
{
	return ((size_t)(unsigned int)tgid * 2654435761u) & (s->nslots - 1);
}

static int slots_grow(struct bpf_scan *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 1024;
	int *v = calloc(n, sizeof(int));

	if (!v)
		return -ENOMEM;
	free(s->slots);
	s->slots = v;
	s->nslots = n;
	for (size_t i = 0; i < s->hs.n; i++) {
		size_t j = slot_of(s, s->hs.v[i].pub.pid);

		while (s->slots[j])
			j = (j + 1) & (n - 1);
		s->slots[j] = (int)i + 1;
	}
	return 0;
}

/* The index of TGID's holder, created when absent; -errno. */
static int holder_index(struct bpf_scan *s, pid_t tgid)
{
	struct rv_holder *h;
	size_t j;
	int r;

	if (s->nslots) {
		for (j = slot_of(s, tgid); s->slots[j]; j = (j + 1) & (s->nslots - 1))
			if (s->hs.v[s->slots[j] - 1].pub.pid == tgid)
				return s->slots[j] - 1;
	}
	if ((s->hs.n + 1) * 2 > s->nslots) {
		r = slots_grow(s);
		if (r < 0)
			return r;
	}
	if (s->hs.n >= s->bh_cap) {
		size_t ncap = s->bh_cap ? s->bh_cap * 2 : 64;
		struct bpf_holder *v = realloc(s->bh, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->bh = v;
		s->bh_cap = ncap;
	}
	h = rv_holders_add(&s->hs, tgid);
	if (!h)
		return -ENOMEM;
	s->bh[s->hs.n - 1] = (struct bpf_holder){0};
	for (j = slot_of(s, tgid); s->slots[j]; j = (j + 1) & (s->nslots - 1))
		;
	s->slots[j] = (int)s->hs.n;
	return (int)s->hs.n - 1;
}

static bool ignored_fd(const struct rv_scan_opts *o, int fd)
{
	for (size_t i = 0; o && i < o->nignore_fds; i++)
		if (o->ignore_fds[i] == fd)
			return true;
	return false;
}

static bool same_target(const struct bpf_scan *s, size_t a, size_t b);
static void fill_ref(const struct bpf_scan *s, const struct rv_bpf_rec *rec, unsigned int target,
		     struct revoke_ref *ref);

static int add_record(struct bpf_scan *s, int pass, const struct rv_bpf_rec *rec_in)
{
	struct rv_bpf_rec copy = *rec_in, *rec = &copy;
	bool alias = rec->target & RV_BPF_ALIAS;
	struct bpf_holder *b;
	struct revoke_ref *ref;
	struct rv_holder *h;
	int i;

	rec->target &= ~RV_BPF_ALIAS;
	if (rec->tgid <= 0 || (rec->kind != RV_BPF_INFO && rec->kind != RV_BPF_CANDIDATE &&
			       rec->kind != RV_BPF_RESCAN && rec->target >= s->ntargets))
		return 0; /* not in our pid namespace */
	if (rec->tgid == s->self && rec->kind == RV_BPF_FD) {
		for (size_t t = 0; t < s->ntargets; t++)
			if (s->targets[t].path_fd == rec->fd && same_target(s, t, rec->target))
				s->seen_path_fd[t] = true;
		if (ignored_fd(s->opts, rec->fd))
			return 0;
	}
	i = holder_index(s, rec->tgid);
	if (i < 0)
		return i;
	b = &s->bh[i];
	h = &s->hs.v[i];
	if (rec->kind == RV_BPF_INFO) {
		if (!b->info)
			b->rec = *rec;
		b->info = true;
		return 0;
	}
	if (rec->kind == RV_BPF_RESCAN) {
		b->rescan = true; /* from any thread: /proc reads the process */
		return 0;
	}
	/* With a live leader only the leader reports; otherwise each live
	 * thread does, and the first one stands for the process. */
	if (b->tid[pass] == 0)
		b->tid[pass] = rec->tid;
	else if (b->tid[pass] != rec->tid)
		return 0;
	if (rec->kind == RV_BPF_CANDIDATE) {
		b->candidate = true;
		return 0;
	}
	h->alias |= alias;
	/* The map holds the first of the targets that name one file; the
	 * others get the same refs, as from the /proc scanner. */
	for (size_t t = rec->target; t < s->ntargets; t++) {
		if (!same_target(s, t, rec->target))
			continue;
		ref = rv_holder_add_ref(h);
		if (!ref)
			return -ENOMEM;
		fill_ref(s, rec, (unsigned int)t, ref);
		if (!ref->type)
			h->pub.nrefs--; /* a record kind this library does not know */
	}
	return 0;
}

static bool same_target(const struct bpf_scan *s, size_t a, size_t b)
{
	return s->targets[a].dev == s->targets[b].dev && s->targets[a].ino == s->targets[b].ino;
}

static void fill_ref(const struct bpf_scan *s, const struct rv_bpf_rec *rec, unsigned int target,
		     struct revoke_ref *ref)
{
	ref->state = REVOKE_STATE_FOUND;
	ref->target = target;
	switch (rec->kind) {
	case RV_BPF_FD: {
		/* What fdinfo "flags:" shows, split as the /proc scanner does. */
		int flags = (int)rec->flags | (rec->cloexec ? O_CLOEXEC : 0);

		ref->type = REVOKE_REF_FD;
		ref->fd = rec->fd;
		ref->fd_flags = (flags & O_CLOEXEC) ? FD_CLOEXEC : 0;
		ref->open_flags = flags & ~O_CLOEXEC;
		ref->offset = rec->pos;
		break;
	}
	case RV_BPF_MAP:
		ref->type = REVOKE_REF_MAP;
		ref->start = rec->start;
		ref->end = rec->end;
		ref->offset = rec->pos * (uint64_t)s->pagesize;
		ref->prot = ((rec->flags & VM_READ) ? PROT_READ : 0) |
			    ((rec->flags & VM_WRITE) ? PROT_WRITE : 0) |
			    ((rec->flags & VM_EXEC) ? PROT_EXEC : 0);
		ref->map_flags = (rec->flags & VM_MAYSHARE) ? MAP_SHARED : MAP_PRIVATE;
		break;
	case RV_BPF_CWD:
		ref->type = REVOKE_REF_CWD;
		break;
	case RV_BPF_ROOT:
		ref->type = REVOKE_REF_ROOT;
		break;
	case RV_BPF_EXE:
		ref->type = REVOKE_REF_EXE;
		break;
	}
}

/* For processes the iterators did not describe (the holders map was full,
 * or a process found through /proc only): the /proc scanner's sources. */
static int info_from_proc(const struct rv_scan_opts *opts, struct rv_holder *h)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : rv_proc_root;
	const char *names[] = {"stat", "status"};
	struct rv_proc_status status;
	struct rv_proc_stat st;
	char path[128], text[4096];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_close_ int fd = -1;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%d/%s", root, h->pub.pid, names[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? -ESRCH : negative_errno();
		n = read(fd, text, sizeof(text) - 1);
		if (n < 0)
			return errno == ESRCH ? -ESRCH : negative_errno();
		text[n] = '\0';
		if (i == 0 && rv_parse_stat(text, &st) < 0)
			return -ESRCH;
		if (i == 1 && rv_parse_status(text, &status) < 0)
			return -ESRCH;
	}
	snprintf(h->pub.comm, sizeof(h->pub.comm), "%s", st.comm);
	h->pub.uid = status.ruid;
	h->seccomp = status.seccomp;
	h->tracer = status.tracer;
	h->state = status.state;
	h->nspid = status.nspid_inner;
	return 0;
}

/* URING and INFLIGHT refs of a candidate, through /proc; with ALL (a
 * process the iterators could not read for sure), every ref /proc finds
 * replaces the iterators'. */
static int add_proc_refs(struct bpf_scan *s, size_t i, bool all)
{
	struct rv_holder tmp = {.pidfd = -1};
	struct rv_holder *h = &s->hs.v[i];
	int r;

	tmp.pub.pid = h->pub.pid;
	r = rv_scan_proc_pid(s->targets, s->ntargets, s->opts, &tmp);
	if (r < 0) {
		rv_holder_clear(&tmp);
		return r == -ESRCH ? 0 : r;
	}
	if (all)
		h->pub.nrefs = 0;
	for (size_t k = 0; k < tmp.pub.nrefs; k++) {
		struct revoke_ref *ref;

		if (!all && rv_refkind_of(&tmp.pub.refs[k])->found_in != RV_FOUND_FDINFO)
			continue;
		ref = rv_holder_add_ref(h);
		if (!ref) {
			rv_holder_clear(&tmp);
			return -ENOMEM;
		}
		*ref = tmp.pub.refs[k];
	}
	rv_holder_clear(&tmp);
	return 0;
}

/* The letter of /proc/PID/status "State:" (fs/proc/array.c: task_state_index
 * over "RSDTtXZPI"). */
static char state_letter(unsigned int raw, unsigned int exit_state)
{
	static const char letters[] = "RSDTtXZPI";
	unsigned int state = (raw | exit_state) & 0x7f; /* TASK_REPORT */
	int i = 0;

	if ((raw & 0x402) == 0x402) /* TASK_IDLE: TASK_UNINTERRUPTIBLE | TASK_NOLOAD */
		state = 0x80;
	if (raw & (0x1000 | 0x8000)) /* TASK_RTLOCK_WAIT, TASK_FROZEN: shown as D */
		state = 2;
	while (state) {
		state >>= 1;
		i++;
	}
	return letters[i];
}

/* Fills in what the scan leaves to user space and drops what is not a
 * holder after all (only candidates, or gone); the list stays in order. */
static int finish_holders(struct bpf_scan *s)
{
	long pidfd_max = 0;
	size_t out = 0;
	int r;

	for (size_t i = 0; i < s->hs.n; i++) {
		struct bpf_holder *b = &s->bh[i];
		struct rv_holder *h = &s->hs.v[i];

		if (b->candidate || b->rescan) {
			r = add_proc_refs(s, i, b->rescan);
			if (r < 0)
				return r;
		}
		if (h->pub.nrefs == 0)
			goto drop;
		h->self = h->pub.pid == s->self;
		/* Ourselves: the record has our leader's state when a pass
		 * found us, running or waiting for the other pass's thread; read
		 * from here, as the /proc scanner reads it, it does not depend
		 * on that. */
		if (b->info && !h->self) {
			h->pub.uid = b->rec.uid;
			snprintf(h->pub.comm, sizeof(h->pub.comm), "%.16s", b->rec.comm);
			h->seccomp = b->rec.seccomp;
			h->tracer = b->rec.tracer;
			h->state = state_letter(b->rec.state, b->rec.exit_state);
			h->nspid = b->rec.nspid;
			h->zombie_leader = b->rec.exit_state != 0;
			h->vdso = b->rec.start;
			h->pf_flags = (unsigned int)b->rec.flags;
			h->have_pf_flags = true;
		} else {
			r = info_from_proc(s->opts, h);
			if (r == -ESRCH)
				goto drop;
			if (r < 0)
				return r;
			h->zombie_leader = h->state == 'Z' || h->state == 'X';
		}
		r = s->opts && (s->opts->flags & RV_SCAN_NO_PIDFD)
			? 0
			: rv_holder_pidfd(h->pub.pid, &h->pidfd, &pidfd_max);
		if (r == -ESRCH || r == -EINVAL)
			goto drop; /* exited since */
		if (r < 0)
			return r;
		rv_holder_sort_refs(h);
		if (out != i)
			s->hs.v[out] = *h;
		out++;
		continue;
	drop:
		rv_holder_clear(h);
	}
	s->hs.n = out;
	rv_holders_sort(&s->hs);
	return 0;
}

/* Moves S's holders to the end of RET, which is left as it was on failure. */
static int move_holders(struct bpf_scan *s, struct rv_holders *ret)
{
	return rv_holders_merge(ret, &s->hs);
}

static int sink(void *arg, int pass, const struct rv_bpf_rec *rec)
{
	return add_record(arg, pass, rec);
}

int rv_scan_bpf(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holders *ret)
{
	struct bpf_scan s = {.targets = targets,
			     .ntargets = ntargets,
			     .opts = opts,
			     .self = getpid(),
			     .pagesize = sysconf(_SC_PAGESIZE)};
	struct rv_bpf *b = opts && opts->bpf ? *opts->bpf : NULL, *own = NULL;
	int r;

	if (opts && opts->proc_root && strcmp(opts->proc_root, rv_proc_root) != 0)
		return -EOPNOTSUPP; /* a saved tree: only /proc can read it */
	if (ntargets > RV_BPF_MAX_TARGETS)
		return -EOPNOTSUPP;
	if (ntargets == 0)
		return 0;

	/* Loading costs more than a pass (verification, CO-RE): a caller that
	 * scans the same targets again keeps the programs (opts->bpf). */
	if (b)
		r = rv_bpf_clear_holders(b);
	else {
		r = rv_bpf_load(targets, ntargets, &b);
		if (r >= 0 && opts && opts->bpf)
			*opts->bpf = b;
		else if (r >= 0)
			own = b;
	}
	if (r < 0)
		return r;

	s.seen_path_fd = calloc(ntargets, sizeof(bool));
	if (!s.seen_path_fd) {
		r = -ENOMEM;
		goto out;
	}
	r = rv_bpf_read(b, opts ? opts->deadline_ns : 0, sink, &s);
	if (r < 0)
		goto out;
	/* The kernel's (s_dev, i_ino) must be what stat() says; it is not on
	 * btrfs subvolumes and some FUSE/network filesystems, whose getattr
	 * reports another st_dev. The target's own O_PATH descriptor, in this
	 * process, tells. */
	for (size_t t = 0; t < ntargets; t++)
		if (targets[t].path_fd >= 0 && !s.seen_path_fd[t]) {
			r = -EOPNOTSUPP;
			goto out;
		}
	r = finish_holders(&s);
	if (r < 0)
		goto out;
	r = move_holders(&s, ret);
out:
	rv_bpf_free(own);
	bpf_scan_done(&s);
	return r < 0 ? r : 0;
}
