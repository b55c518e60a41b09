/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading the iterators (revoke.bpf.c) for a set of targets, and reading
 * them. The programs come as a light skeleton (bpftool gen skeleton -L): the
 * kernel applies the CO-RE relocations, so neither libbpf nor the vmlinux
 * BTF is loaded into the caller (peak RSS stays a few MiB).
 *
 * The three passes are independent of each other (each program sends a
 * holder's identity when it is the first to find it), so on more than one
 * CPU the descriptor pass, the largest, runs in a thread of its own beside
 * the other two.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "load.h"
#include "kinds/target.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "revoke.lskel.h"
#pragma GCC diagnostic pop

/* The loaded programs, attached, with the targets in their map. */
struct rv_bpf {
	struct revoke_bpf *skel;
	int link_fds[RV_BPF_NPASS];
};

void rv_bpf_free(struct rv_bpf *b)
{
	if (!b)
		return;
	revoke_bpf__destroy(b->skel);
	free(b);
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

static int put_target(int map_fd, struct rv_bpf_sieve *sv, struct rv_bpf_key *key, __u32 idx)
{
	__u32 bit = rv_bpf_key_bit(key->ino, key->dev, key->kind);

	sv->w[bit / 64] |= 1ull << (bit % 64);
	/* Two targets naming one file: the first index stands for both, as
	 * only one ref per reference is reported. */
	if (skel_map_update_elem(map_fd, key, &idx, BPF_NOEXIST) < 0 && errno != EEXIST)
		return negative_errno();
	return 0;
}

static int put_targets(struct revoke_bpf *skel, const struct rv_target *targets, size_t ntargets)
{
	int map_fd = skel->maps.targets.map_fd;
	struct rv_bpf_sieve sv = {{0}};
	__u32 zero = 0;
	int r;

	for (size_t t = 0; t < ntargets; t++) {
		struct rv_bpf_key key = {.ino = (__u64)targets[t].ino,
					 .dev = (__u32)rv_target_kdev(&targets[t])};

		/* A mount: what was opened through it, by its id. */
		if (targets[t].mount)
			key = (struct rv_bpf_key){.ino = targets[t].mnt_id, .kind = RV_BPF_KEY_MNT};
		r = put_target(map_fd, &sv, &key, (__u32)t);
		if (r < 0)
			return r;
		/* A device's other nodes: by its device number. */
		if (targets[t].mount || !(S_ISCHR(targets[t].mode) || S_ISBLK(targets[t].mode)))
			continue;
		key = (struct rv_bpf_key){
		    .dev = major(targets[t].rdev) << 20 | minor(targets[t].rdev),
		    .kind = S_ISCHR(targets[t].mode) ? RV_BPF_KEY_CHR : RV_BPF_KEY_BLK};
		r = put_target(map_fd, &sv, &key, (__u32)t);
		if (r < 0)
			return r;
	}
	if (skel_map_update_elem(skel->maps.sieve.map_fd, &zero, &sv, BPF_ANY) < 0)
		return negative_errno();
	return 0;
}

int rv_bpf_load(const struct rv_target *targets, size_t ntargets, struct rv_bpf **ret)
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
	r = put_targets(b->skel, targets, ntargets);
	if (r < 0)
		goto fail;
	r = revoke_bpf__attach(b->skel);
	if (r < 0) {
		r = load_error(r < -1 ? r : negative_errno());
		goto fail;
	}
	b->link_fds[RV_BPF_PASS_FILE] = b->skel->links.rv_task_file_fd;
	b->link_fds[RV_BPF_PASS_VMA] = b->skel->links.rv_task_vma_fd;
	b->link_fds[RV_BPF_PASS_TASK] = b->skel->links.rv_task_fd;
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

int rv_bpf_clear_holders(struct rv_bpf *b)
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

/* What the passes share while they run. */
struct reading {
	struct rv_bpf *b;
	uint64_t deadline_ns;
	rv_bpf_sink sink;
	void *arg;
	pthread_mutex_t mu; /* around the sink */
	atomic_int error;   /* the first failure, which stops every pass */
};

enum { BUF_RECS = 1024 };

static int feed(struct reading *rd, int pass, const char *buf, size_t n)
{
	int r = 0;

	if (!rd->sink)
		return 0;
	pthread_mutex_lock(&rd->mu);
	for (size_t off = 0; r >= 0 && off < n; off += sizeof(struct rv_bpf_rec)) {
		struct rv_bpf_rec rec;

		memcpy(&rec, buf + off, sizeof(rec));
		r = rd->sink(rd->arg, pass, &rec);
	}
	pthread_mutex_unlock(&rd->mu);
	return r < 0 ? r : 0;
}

/* Runs the iterator of PASS and feeds its records to the sink. */
static int read_pass(struct reading *rd, int pass, char *buf, size_t size)
{
	union bpf_attr attr;
	_cleanup_close_ int fd = -1;
	size_t have = 0;

	memset(&attr, 0, sizeof(attr));
	attr.iter_create.link_fd = (__u32)rd->b->link_fds[pass];
	fd = (int)syscall(SYS_bpf, BPF_ITER_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return negative_errno();
	for (;;) {
		size_t whole;
		ssize_t n;
		int r;

		if (atomic_load(&rd->error) < 0)
			return 0; /* the other pass failed: its error stands */
		if (rd->deadline_ns && rv_now_ns() > rd->deadline_ns)
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
		whole = have - have % sizeof(struct rv_bpf_rec);
		r = feed(rd, pass, buf, whole);
		if (r < 0)
			return r;
		memmove(buf, buf + whole, have - whole);
		have -= whole;
	}
	return have ? -EIO : 0;
}

static void read_passes(struct reading *rd, const int *passes, size_t n)
{
	_cleanup_free_ char *buf = malloc(BUF_RECS * sizeof(struct rv_bpf_rec));
	int r = buf ? 0 : -ENOMEM, none = 0;

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = read_pass(rd, passes[i], buf, BUF_RECS * sizeof(struct rv_bpf_rec));
	if (r < 0)
		atomic_compare_exchange_strong(&rd->error, &none, r);
}

static void *file_pass_thread(void *arg)
{
	static const int passes[] = {RV_BPF_PASS_FILE};

	read_passes(arg, passes, ARRAY_SIZE(passes));
	return NULL;
}

int rv_bpf_read(struct rv_bpf *b, uint64_t deadline_ns, rv_bpf_sink sink, void *arg)
{
	static const int all[] = {RV_BPF_PASS_FILE, RV_BPF_PASS_VMA, RV_BPF_PASS_TASK};
	struct reading rd = {.b = b, .deadline_ns = deadline_ns, .sink = sink, .arg = arg};
	pthread_t th;
	bool threaded;

	pthread_mutex_init(&rd.mu, NULL);
	atomic_init(&rd.error, 0);
	/* The descriptor pass costs about what the other two cost together. */
	threaded = rv_cpus() > 1 && pthread_create(&th, NULL, file_pass_thread, &rd) == 0;
	if (threaded) {
		read_passes(&rd, all + 1, ARRAY_SIZE(all) - 1);
		pthread_join(th, NULL);
	} else
		read_passes(&rd, all, ARRAY_SIZE(all));
	pthread_mutex_destroy(&rd.mu);
	return atomic_load(&rd.error);
}
