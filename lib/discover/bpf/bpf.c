/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rv_scan_bpf: the holders of the targets through three BPF iterators
 * (revoke.bpf.c): task_file (descriptors), task_vma (mappings) and task
 * (cwd, root, exe, and each holder's identity). One read() pass over each
 * iterator replaces the /proc scanner's open+statx per fd; its results are
 * the same (tests/unit/test-unit-bpf.c checks that on one load):
 *  - fd_flags/open_flags as fdinfo "flags:" shows them (f_flags, plus
 *    O_CLOEXEC when the fdtable's close_on_exec bit is set), offset f_pos;
 *  - mappings as /proc/PID/maps shows them (prot from VM_READ/WRITE/EXEC,
 *    MAP_SHARED iff VM_MAYSHARE, offset = vm_pgoff pages);
 *  - a thread group whose leader exited is seen through its first live
 *    thread, as the /proc scanner does through /proc/PID/task/TID;
 *  - uid, comm, seccomp, tracer and state from the leader, as in
 *    /proc/PID/status and stat.
 * io_uring fixed files and SCM_RIGHTS fds in flight are in no fd table: the
 * fd iterator flags the processes that have a ring or a unix socket with fds
 * queued, and only those are looked at through /proc (rv_scan_proc_pid).
 *
 * The fd fields come with the records, so RV_SCAN_NO_FDINFO changes nothing
 * here. Holders whose identity the task pass did not deliver (more than
 * RV_BPF_MAX_HOLDERS) get it from /proc/PID/stat and status.
 *
 * Matching compares the kernel's (i_sb->s_dev, i_ino) with the target's
 * stat(); on btrfs subvolumes and some FUSE/network filesystems getattr
 * reports another st_dev. The targets' own O_PATH descriptors, in this
 * process, are looked for in the fd pass: if one is missing, the identities
 * differ and the scan gives way to /proc (-EOPNOTSUPP).
 *
 * The programs come as a light skeleton (bpftool gen skeleton -L): the
 * kernel applies the CO-RE relocations, so neither libbpf nor the vmlinux
 * BTF is loaded into the caller (peak RSS stays a few MiB). That needs BTF,
 * BPF_PROG_TYPE_SYSCALL with in-kernel CO-RE (5.17), the task, task_file and
 * task_vma iterators, and a caller allowed to load tracing programs (CAP_BPF
 * + CAP_PERFMON, or CAP_SYS_ADMIN; no lockdown in confidentiality mode).
 * Any of those missing is -EOPNOTSUPP or -EPERM, on which rv_scan falls back
 * to /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "records.h"
#include "discover/proc.h"
#include "kinds/target.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "revoke.lskel.h"
#include "kinds/refkind.h"
#pragma GCC diagnostic pop

#define VM_READ	    0x1UL
#define VM_WRITE    0x2UL
#define VM_EXEC	    0x4UL
#define VM_MAYSHARE 0x80UL

enum { PASS_FILE, PASS_VMA, PASS_TASK, NPASS };

/* Per new holder: which thread each pass took its records from. */
struct bpf_holder {
	pid_t tid[NPASS];
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

/* Runs the iterator behind LINK_FD and feeds its records to add_record. */
static int run_iter(struct bpf_scan *s, int pass, int link_fd, char *buf, size_t size)
{
	union bpf_attr attr;
	_cleanup_close_ int fd = -1;
	size_t have = 0;

	memset(&attr, 0, sizeof(attr));
	attr.iter_create.link_fd = (__u32)link_fd;
	fd = (int)syscall(SYS_bpf, BPF_ITER_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return negative_errno();
	for (;;) {
		ssize_t n;
		size_t off = 0;

		if (s->opts && s->opts->deadline_ns && rv_now_ns() > s->opts->deadline_ns)
			return -ETIMEDOUT;
		n = read(fd, buf + have, size - have);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		have += (size_t)n;
		for (; have - off >= sizeof(struct rv_bpf_rec); off += sizeof(struct rv_bpf_rec)) {
			struct rv_bpf_rec rec;
			int r;

			memcpy(&rec, buf + off, sizeof(rec));
			r = add_record(s, pass, &rec);
			if (r < 0)
				return r;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return have ? -EIO : 0;
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
		if (b->info) {
			h->pub.uid = b->rec.uid;
			snprintf(h->pub.comm, sizeof(h->pub.comm), "%.16s", b->rec.comm);
			h->seccomp = b->rec.seccomp;
			h->tracer = b->rec.tracer;
			h->state = state_letter(b->rec.state, b->rec.exit_state);
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
		h->self = h->pub.pid == s->self;
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

/*
 * FMODE_BACKING of the running kernel, which only include/linux/fs.h knows:
 * 1 << 25 from 6.5 (backing files appeared), 1 << 24 since 6.14. It matters
 * from 6.8 on, where a backing file's f_path is the real file. 0 (unknown)
 * on kernels newer than the last one this was checked on, and on older ones,
 * which have no user_path unless something was backported. Unknown, or
 * wrong, costs speed only: the iterators then have /proc read a process
 * that may map a target through an unrecognised backing file.
 */
static unsigned int fmode_backing(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	if (major != 6 || minor < 5 || minor > 18)
		return 0;
	return minor >= 14 ? 1u << 24 : 1u << 25;
}

static int load_error(int r)
{
	/* EPERM: no CAP_BPF/CAP_PERFMON, lockdown, or a LSM said no. Anything
	 * else (EACCES or EINVAL from the verifier of an older kernel, ENOENT
	 * for a missing BTF type, E2BIG...) means this kernel cannot run the
	 * programs. Either way rv_scan falls back to /proc. */
	return r == -EPERM ? -EPERM : -EOPNOTSUPP;
}

/* The loaded programs, attached, with the targets in their map. */
struct rv_bpf {
	struct revoke_bpf *skel;
	int link_fds[NPASS];
};

void rv_bpf_free(struct rv_bpf *b)
{
	if (!b)
		return;
	revoke_bpf__destroy(b->skel);
	free(b);
}

static int bpf_load(const struct rv_target *targets, size_t ntargets, struct rv_bpf **ret)
{
	struct rv_bpf *b;
	int r;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	/* BPF_PROG_LOAD fails now and then with EAGAIN while tasks fork and
	 * exit around it (seen: 2 loads in 60 of holders_exit_during); libbpf
	 * tries 5 times, the light skeleton's loader not at all. */
	for (int attempt = 0; attempt < 5; attempt++) {
		b->skel = revoke_bpf__open();
		if (!b->skel) {
			free(b);
			return -ENOMEM;
		}
		b->skel->rodata->fmode_backing = fmode_backing();
		b->skel->rodata->by_mount = rv_targets_have_mount(targets, ntargets);
		r = revoke_bpf__load(b->skel);
		if (r != -EAGAIN)
			break;
		revoke_bpf__destroy(b->skel);
		b->skel = NULL;
	}
	if (r < 0) {
		r = load_error(r);
		goto fail;
	}
	if (r > 0) { /* the loader program's own failure code */
		r = -EOPNOTSUPP;
		goto fail;
	}
	for (size_t t = 0; t < ntargets; t++) {
		struct rv_bpf_key key = {.ino = (__u64)targets[t].ino,
					 .dev = (__u32)rv_target_kdev(&targets[t])};
		__u32 idx = (__u32)t;

		/* A mount: what was opened through it, by its id. */
		if (targets[t].mount)
			key = (struct rv_bpf_key){.ino = targets[t].mnt_id, .kind = RV_BPF_KEY_MNT};

		/* Two targets naming one file: the first index stands for both,
		 * as only one ref per reference is reported. */
		r = skel_map_update_elem(b->skel->maps.targets.map_fd, &key, &idx, BPF_NOEXIST);
		if (r < 0 && errno != EEXIST) {
			r = negative_errno();
			goto fail;
		}
		/* A device's other nodes: by its device number. */
		if (targets[t].mount || !(S_ISCHR(targets[t].mode) || S_ISBLK(targets[t].mode)))
			continue;
		key = (struct rv_bpf_key){
		    .dev = major(targets[t].rdev) << 20 | minor(targets[t].rdev),
		    .kind = S_ISCHR(targets[t].mode) ? RV_BPF_KEY_CHR : RV_BPF_KEY_BLK};
		r = skel_map_update_elem(b->skel->maps.targets.map_fd, &key, &idx, BPF_NOEXIST);
		if (r < 0 && errno != EEXIST) {
			r = negative_errno();
			goto fail;
		}
	}
	r = revoke_bpf__attach(b->skel);
	if (r < 0) {
		r = load_error(r < -1 ? r : negative_errno());
		goto fail;
	}
	b->link_fds[PASS_FILE] = b->skel->links.rv_task_file_fd;
	b->link_fds[PASS_VMA] = b->skel->links.rv_task_vma_fd;
	b->link_fds[PASS_TASK] = b->skel->links.rv_task_fd;
	*ret = b;
	return 0;
fail:
	rv_bpf_free(b);
	return r;
}

/* The holders map is the one state a pass leaves behind (which thread
 * groups hold a target, whose identity went out): empty it for the next.
 * One BPF_MAP_LOOKUP_AND_DELETE_BATCH takes them all (5.6+): the engine's
 * rescan runs while every holder waits stopped, and a key at a time costs two
 * syscalls per holder. Without it, keys first, then deletes: a first-key
 * lookup after each delete would walk the emptied buckets again every time. */
#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's, for a map without batch operations */
#endif

static int clear_holders(struct rv_bpf *b)
{
	int fd = b->skel->maps.holders.map_fd;
	_cleanup_free_ __u32 *keys = NULL, *values = NULL;
	union bpf_attr attr;
	__u64 token = 0;
	size_t n = 0;

	keys = malloc(RV_BPF_MAX_HOLDERS * sizeof(*keys));
	values = malloc(RV_BPF_MAX_HOLDERS * sizeof(*values));
	if (!keys || !values)
		return -ENOMEM;
	for (bool first = true;; first = false) {
		memset(&attr, 0, sizeof(attr));
		attr.batch.map_fd = (__u32)fd;
		attr.batch.in_batch = first ? 0 : (__u64)(unsigned long)&token;
		attr.batch.out_batch = (__u64)(unsigned long)&token;
		attr.batch.keys = (__u64)(unsigned long)keys;
		attr.batch.values = (__u64)(unsigned long)values;
		attr.batch.count = RV_BPF_MAX_HOLDERS;
		if (syscall(SYS_bpf, BPF_MAP_LOOKUP_AND_DELETE_BATCH, &attr, sizeof(attr)) == 0)
			continue;
		if (errno == ENOENT)
			return 0; /* all of them went */
		if (errno != EINVAL && errno != ENOTSUPP && errno != EOPNOTSUPP)
			return negative_errno();
		break; /* an older kernel: one at a time */
	}
	while (n < RV_BPF_MAX_HOLDERS) {
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (__u32)fd;
		attr.key = n ? (__u64)(unsigned long)&keys[n - 1] : 0; /* 0: the first */
		attr.next_key = (__u64)(unsigned long)&keys[n];
		if (syscall(SYS_bpf, BPF_MAP_GET_NEXT_KEY, &attr, sizeof(attr)) < 0) {
			if (errno != ENOENT)
				return negative_errno();
			break;
		}
		n++;
	}
	for (size_t i = 0; i < n; i++)
		if (skel_map_delete_elem(fd, &keys[i]) < 0 && errno != ENOENT)
			return negative_errno();
	return 0;
}

int rv_scan_bpf(const struct rv_target *targets, size_t ntargets, const struct rv_scan_opts *opts,
		struct rv_holders *ret)
{
	enum { BUF_SIZE = 64 * sizeof(struct rv_bpf_rec) * 16 };
	struct bpf_scan s = {.targets = targets,
			     .ntargets = ntargets,
			     .opts = opts,
			     .self = getpid(),
			     .pagesize = sysconf(_SC_PAGESIZE)};
	struct rv_bpf *b = opts && opts->bpf ? *opts->bpf : NULL, *own = NULL;
	_cleanup_free_ char *buf = NULL;
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
		r = clear_holders(b);
	else {
		r = bpf_load(targets, ntargets, &b);
		if (r >= 0 && opts && opts->bpf)
			*opts->bpf = b;
		else if (r >= 0)
			own = b;
	}
	if (r < 0)
		return r;

	s.seen_path_fd = calloc(ntargets, sizeof(bool));
	buf = malloc(BUF_SIZE);
	if (!s.seen_path_fd || !buf) {
		r = -ENOMEM;
		goto out;
	}
	/* The task pass runs last: it describes the holders the others found. */
	for (int pass = 0; pass < NPASS; pass++) {
		r = run_iter(&s, pass, b->link_fds[pass], buf, BUF_SIZE);
		if (r < 0)
			goto out;
		if (pass == PASS_FILE)
			/* The kernel's (s_dev, i_ino) must be what stat() says; it is
			 * not on btrfs subvolumes and some FUSE/network filesystems,
			 * whose getattr reports another st_dev. The target's own O_PATH
			 * descriptor, in this process, tells. */
			for (size_t t = 0; t < ntargets; t++)
				if (targets[t].path_fd >= 0 && !s.seen_path_fd[t]) {
					r = -EOPNOTSUPP;
					goto out;
				}
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
