/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the stub goes in a holder, and how it stops for us.
 *
 * Code: the tail of the vDSO's last page, after the image (its last section
 * and the section header table): mapped executable in every process, the
 * same image in every process of this kernel, never executed (a 32-bit
 * holder has the kernel's ia32 vDSO: place_vdso32). Failing that
 * (a process that unmapped its vDSO), the tail of an executable ELF
 * segment's last page. A debugger's write (FOLL_FORCE) gives the holder a
 * private copy of that page; the bytes are put back when the program is
 * over.
 */
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "tracee.h"

static pthread_once_t vdso_once = PTHREAD_ONCE_INIT;
static uint64_t our_vdso;	  /* our own vDSO, 0 if none */
static size_t pad_start, pad_end; /* the unused tail, as offsets into the image */
static Elf64_Ehdr our_ehdr;

/* [vdso] in our own maps: the mapping's length (the image may end earlier). */
static size_t vdso_map_len(uint64_t base)
{
	char line[512];
	size_t len = 0;
	FILE *f = rv_proc_fopen(RV_PROC_SELF, 0, "maps");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct rv_maps_entry e;

		line[strcspn(line, "\n")] = '\0';
		if (rv_parse_maps_line(line, &e) == 0 && e.start == base && e.path &&
		    strcmp(e.path, "[vdso]") == 0) {
			len = e.end - e.start;
			break;
		}
	}
	fclose(f);
	return len;
}

static void vdso_init(void)
{
	const uint8_t *b = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)b;
	const Elf64_Shdr *s;
	size_t end, map_len;

	if (!b || memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 || e->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	map_len = vdso_map_len((uint64_t)(uintptr_t)b);
	end = e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	if (!map_len || e->e_shentsize != sizeof(*s) || end > map_len)
		return;
	s = (const Elf64_Shdr *)(b + e->e_shoff);
	for (unsigned int i = 0; i < e->e_shnum; i++)
		if (s[i].sh_type != SHT_NOBITS && s[i].sh_offset + s[i].sh_size > end)
			end = s[i].sh_offset + s[i].sh_size;
	end = (end + 63) & ~(size_t)63;
	if (end >= map_len)
		return;
	our_vdso = (uint64_t)(uintptr_t)b;
	our_ehdr = *e;
	pad_start = end;
	pad_end = map_len;
}

/* The holder's vDSO base from its auxiliary vector. */
static int holder_vdso(struct rv_tracee *t, uint64_t *ret)
{
	uint64_t av[2 * 64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	fd = rv_proc_open(t->pid, t->inj->tid, O_RDONLY, "auxv");
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	n = read(fd, av, sizeof(av));
	if (n < 0)
		return negative_errno();
	for (size_t i = 0; i + 1 < (size_t)n / sizeof(uint64_t); i += 2) {
		if (av[i] == AT_NULL)
			break;
		if (av[i] == AT_SYSINFO_EHDR) {
			*ret = av[i + 1];
			return 0;
		}
	}
	return -ENOENT;
}

/* The vDSO's unused tail in T, when it has our kernel's vDSO. */
static int place_vdso(struct rv_tracee *t, size_t len, uint64_t *ret_addr)
{
	Elf64_Ehdr eh;
	uint64_t base;
	int r;

	pthread_once(&vdso_once, vdso_init);
	if (!our_vdso || len > pad_end - pad_start)
		return -ENOSPC;
	if (t->vdso_hint)
		base = t->vdso_hint;
	else {
		r = holder_vdso(t, &base);
		if (r < 0)
			return r == -ENOENT ? -ENOSPC : r;
	}
	/* The same image as ours (a restored process may carry another
	 * kernel's, or have unmapped it). */
	if (rv_mem_read(t, base, &eh, sizeof(eh)) < 0 || memcmp(&eh, &our_ehdr, sizeof(eh)) != 0)
		return -ENOSPC;
	*ret_addr = base + pad_start;
	return 0;
}

/* An ELF file's program headers, of either class, as 64-bit ones. */
static int read_phdrs(struct rv_tracee *t, uint64_t base, size_t map_len, Elf64_Phdr *ph,
		      size_t max, size_t *ret_n)
{
	unsigned char ident[EI_NIDENT];

	if (rv_mem_read(t, base, ident, sizeof(ident)) < 0 || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (rv_mem_read(t, base, &eh, sizeof(eh)) < 0 ||
		    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > max ||
		    eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) > map_len ||
		    rv_mem_read(t, base + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) < 0)
			return -ENOEXEC;
		*ret_n = eh.e_phnum;
		return 0;
	}
	if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		Elf32_Phdr p32[32];

		if (rv_mem_read(t, base, &eh, sizeof(eh)) < 0 ||
		    eh.e_phentsize != sizeof(Elf32_Phdr) || eh.e_phnum > max ||
		    eh.e_phnum > ARRAY_SIZE(p32) ||
		    eh.e_phoff + eh.e_phnum * sizeof(Elf32_Phdr) > map_len ||
		    rv_mem_read(t, base + eh.e_phoff, p32, eh.e_phnum * sizeof(Elf32_Phdr)) < 0)
			return -ENOEXEC;
		for (unsigned int i = 0; i < eh.e_phnum; i++)
			ph[i] = (Elf64_Phdr){.p_type = p32[i].p_type,
					     .p_flags = p32[i].p_flags,
					     .p_offset = p32[i].p_offset,
					     .p_filesz = p32[i].p_filesz};
		*ret_n = eh.e_phnum;
		return 0;
	}
	return -ENOEXEC;
}

/*
 * A 32-bit holder's vDSO is the kernel's ia32 image, which we do not have
 * mapped ourselves: its unused tail is found from its own section headers,
 * read from the holder ([vdso] is the kernel's mapping: no one else's
 * bytes). MAPS is the holder's maps, LEN the room needed.
 */
static int place_vdso32(struct rv_tracee *t, FILE *maps, size_t len, uint64_t *ret_addr)
{
	char line[512];
	uint64_t base = 0, map_len = 0;
	Elf32_Ehdr eh;
	Elf32_Shdr sh[64];
	uint64_t end;

	while (fgets(line, sizeof(line), maps)) {
		struct rv_maps_entry e;

		line[strcspn(line, "\n")] = '\0';
		if (rv_parse_maps_line(line, &e) == 0 && e.path && strcmp(e.path, "[vdso]") == 0) {
			base = e.start;
			map_len = e.end - e.start;
			break;
		}
	}
	rewind(maps);
	if (!base || rv_mem_read(t, base, &eh, sizeof(eh)) < 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS32 ||
	    eh.e_machine != EM_386 || eh.e_shentsize != sizeof(Elf32_Shdr) ||
	    eh.e_shnum > ARRAY_SIZE(sh) ||
	    (end = eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf32_Shdr)) > map_len ||
	    rv_mem_read(t, base + eh.e_shoff, sh, eh.e_shnum * sizeof(Elf32_Shdr)) < 0)
		return -ENOSPC;
	for (unsigned int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type != SHT_NOBITS && (uint64_t)sh[i].sh_offset + sh[i].sh_size > end)
			end = (uint64_t)sh[i].sh_offset + sh[i].sh_size;
	end = (end + 63) & ~63ull;
	if (end >= map_len || map_len - end < len)
		return -ENOSPC;
	*ret_addr = base + end;
	return 0;
}

/*
 * Otherwise the tail of an executable ELF segment: the bytes between the end
 * of its file content (p_filesz) and the end of its last page are mapped
 * executable but belong to no segment's code. The ELF header (of either
 * class: a 32-bit holder's files are ELF32) is read from the file's mapping
 * at offset 0.
 */
static int place_elf_tail(struct rv_tracee *t, size_t len, uint64_t *ret_addr)
{
	char line[4096];
	struct rv_maps_entry first = {0};
	char first_path[4096] = "";
	FILE *f;
	int r = -ENOSPC;

	f = rv_proc_fopen(t->pid, t->inj->tid, "maps");
	if (!f)
		return errno == ENOENT ? -ESRCH : negative_errno();
	if (t->compat)
		r = place_vdso32(t, f, len, ret_addr);
	while (r == -ENOSPC && fgets(line, sizeof(line), f)) {
		struct rv_maps_entry e;
		Elf64_Phdr ph[32];
		size_t nph;

		line[strcspn(line, "\n")] = '\0';
		if (rv_parse_maps_line(line, &e) < 0 || !e.path || e.path[0] != '/')
			continue;
		if (e.offset == 0) {
			first = e;
			snprintf(first_path, sizeof(first_path), "%s", e.path);
		}
		if (!(e.prot & PROT_EXEC) || strcmp(first_path, e.path) != 0 ||
		    first.dev_major != e.dev_major || first.dev_minor != e.dev_minor ||
		    first.ino != e.ino)
			continue;
		if (read_phdrs(t, first.start, first.end - first.start, ph, ARRAY_SIZE(ph), &nph) <
		    0)
			continue;
		for (unsigned int i = 0; i < nph; i++) {
			uint64_t seg_end;

			if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) ||
			    ph[i].p_offset + ph[i].p_filesz <= e.offset ||
			    ph[i].p_offset + ph[i].p_filesz > e.offset + (e.end - e.start))
				continue;
			/* The segment's last byte of content, in this mapping. */
			seg_end = e.start + (ph[i].p_offset + ph[i].p_filesz - e.offset);
			seg_end = (seg_end + 63) & ~63ull;
			/* 32-bit code runs below 4 GiB only (a 64-bit process
			 * in a 32-bit code segment has its files above). */
			if (seg_end < e.end && e.end - seg_end >= len &&
			    (!t->compat || e.end <= 1ull << 32)) {
				*ret_addr = seg_end;
				r = 0;
				break;
			}
		}
	}
	fclose(f);
	return r;
}

int rv_place_code(struct rv_tracee *t, size_t len, uint64_t *ret_addr)
{
	int r = t->compat ? -ENOSPC : place_vdso(t, len, ret_addr);

	if (r == -ENOSPC)
		r = place_elf_tail(t, len, ret_addr);
	return r;
}

/* Candidates for the stub's stop, in order: a copy the kernel delivers once
 * nobody traces the thread must be discarded, so the stub takes one whose
 * handler is SIG_IGN, or SIG_DFL with "ignore" as its default action
 * (signal(7)), and that the thread does not block (a blocked one may be
 * waited for with sigwaitinfo or a signalfd, whose copy we would take). No
 * stop signals, no SIGCONT, no synchronous faults. */
void rv_place_stop_signals(struct rv_stub_ctl *ctl)
{
	static const int candidates[] = {
	    SIGURG, SIGWINCH, SIGCHLD, SIGPIPE,	  SIGHUP,  SIGUSR1, SIGUSR2, SIGALRM, SIGTERM,
	    SIGINT, SIGQUIT,  SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGIO,   SIGPWR,  SIGSTKFLT,
	};

	_Static_assert(ARRAY_SIZE(candidates) <= ARRAY_SIZE(ctl->stop_sigs), "stop_sigs");
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
		ctl->stop_sigs[i] = candidates[i];
	ctl->nstop_sigs = (int32_t)ARRAY_SIZE(candidates);
	ctl->default_ignored =
	    1ull << (SIGCHLD - 1) | 1ull << (SIGURG - 1) | 1ull << (SIGWINCH - 1);
}
