/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading and writing a stopped holder's memory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "tracee.h"

/* /proc/PID/task/TID/mem of the holder, opened once per tracee (every
 * thread shares the address space): the descriptor, or -errno. */
static int mem_fd(struct rv_tracee *t)
{

	if (t->mem_fd < 0) {
		t->mem_fd = rv_proc_open(t->pid, t->inj->tid, O_RDWR, "mem");
		if (t->mem_fd < 0)
			return negative_errno();
	}
	return t->mem_fd;
}

int rv_mem_read(struct rv_tracee *t, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	uint8_t *b = buf;

	/* By the injecting thread: a zombie leader has no memory any more. */
	if (process_vm_readv(t->inj->tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	if (errno == EFAULT)
		return -EFAULT;
	/* process_vm_readv can be refused where ptrace is not (LSMs), or
	 * missing (CONFIG_CROSS_MEMORY_ATTACH=n). */
	if (mem_fd(t) >= 0 && pread(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len)
		return 0;
	for (size_t off = 0; off < len;) {
		long w;
		size_t k = len - off < sizeof(w) ? len - off : sizeof(w);

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, t->inj->tid, (void *)(uintptr_t)(addr + off), NULL);
		if (errno)
			return negative_errno();
		memcpy(b + off, &w, k);
		off += k;
	}
	return 0;
}

bool rv_mem_read_at_once(struct rv_tracee *t, const struct iovec *local, const struct iovec *remote,
			 size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += local[i].iov_len;
	return process_vm_readv(t->inj->tid, local, n, remote, n, 0) == (ssize_t)total;
}

/* Whether [ADDR, ADDR+LEN) lies in mappings the holder itself may write:
 * 1, 0, or -errno. */
static int range_writable(const struct rv_tracee *t, uint64_t addr, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	uint64_t at = addr, end = addr + len;
	FILE *f;
	int r = 0;

	f = rv_proc_fopen(t->pid, t->inj->tid, "maps");
	if (!f)
		return negative_errno();
	while (at < end && getline(&line, &cap, f) > 0) {
		struct rv_maps_entry e;

		line[strcspn(line, "\n")] = 0;
		if (rv_parse_maps_line(line, &e) < 0 || e.end <= at)
			continue;
		if (e.start > at || !(e.prot & PROT_WRITE))
			break;
		at = e.end;
	}
	r = at >= end;
	free(line);
	fclose(f);
	return r;
}

int rv_mem_write(struct rv_tracee *t, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};
	int r;

	if (process_vm_writev(t->inj->tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Not writable for the holder itself (a read-only page below its
	 * stack pointer, a guard gap): the stub could not write there either.
	 * PTRACE_POKEDATA would force the write, so it is no fallback here. */
	if (errno == EFAULT || errno == ENOMEM)
		return -EFAULT;
	/* No process_vm_writev (CONFIG_CROSS_MEMORY_ATTACH=n, a tinyconfig
	 * kernel) or refused by an LSM: /proc/PID/mem writes with FOLL_FORCE,
	 * so the holder's own right to write there is checked first. */
	if (errno != ENOSYS && errno != EPERM)
		return negative_errno();
	r = range_writable(t, addr, len);
	if (r <= 0)
		return r < 0 ? r : -EFAULT;
	r = mem_fd(t);
	if (r < 0)
		return r;
	if (pwrite(t->mem_fd, buf, len, (off_t)addr) != (ssize_t)len)
		return errno ? negative_errno() : -EIO;
	return 0;
}

int rv_mem_poke_text(struct rv_tracee *t, uint64_t addr, const void *buf, size_t len)
{
	if (mem_fd(t) >= 0 && pwrite(t->mem_fd, buf, len, (off_t)addr) == (ssize_t)len)
		return 0;
	/* /proc/PID/mem refused (no procfs here): a word at a time. */
	for (size_t off = 0; off < len;) {
		size_t k = len - off < sizeof(long) ? len - off : sizeof(long);
		long w = 0;

		if (k < sizeof(long)) {
			errno = 0;
			w = ptrace(PTRACE_PEEKTEXT, t->inj->tid, (void *)(uintptr_t)(addr + off),
				   NULL);
			if (errno)
				return negative_errno();
		}
		memcpy(&w, (const uint8_t *)buf + off, k);
		if (ptrace(PTRACE_POKETEXT, t->inj->tid, (void *)(uintptr_t)(addr + off),
			   (void *)w) < 0)
			return negative_errno();
		off += k;
	}
	return 0;
}
