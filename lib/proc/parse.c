/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pure parsers for /proc text: no I/O, no allocation, so that they can be
 * tested (and fuzzed) on any string. Every number goes through a checked
 * helper; a missing or malformed mandatory field is -EINVAL, a number that
 * does not fit is -ERANGE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static int digit_value(char c, unsigned int base)
{
	unsigned int v;

	if (c >= '0' && c <= '9')
		v = (unsigned int)(c - '0');
	else if (c >= 'a' && c <= 'f')
		v = (unsigned int)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		v = (unsigned int)(c - 'A' + 10);
	else
		return -1;
	return v < base ? (int)v : -1;
}

/* Parses an unsigned number at *p in BASE; advances *p past it. */
static int parse_u64(const char **p, unsigned int base, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (digit_value(*s, base) < 0)
		return -EINVAL;
	for (; (d = digit_value(*s, base)) >= 0; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
	}
	*p = s;
	*ret = v;
	return 0;
}

/* A signed decimal (stat has -1 in tpgid, negative nice...). */
static int parse_s64(const char **p, int64_t *ret)
{
	const char *s = *p;
	bool neg = *s == '-';
	uint64_t v;
	int r;

	if (neg)
		s++;
	r = parse_u64(&s, 10, &v);
	if (r < 0)
		return r;
	if (v > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*p = s;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int parse_int_at(const char **p, int *ret)
{
	int64_t v;
	int r;

	r = parse_s64(p, &v);
	if (r < 0)
		return r;
	if (v < INT32_MIN || v > INT32_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

int rv_parse_int(const char *s, int *ret)
{
	const char *p = s;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_u64(&p, 10, &v);
	if (r < 0)
		return r;
	if (*p != '\0')
		return -EINVAL;
	if (v > INT32_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

int rv_parse_stat(const char *text, struct rv_proc_stat *ret)
{
	struct rv_proc_stat st = {0};
	const char *p = text, *open, *close;
	int64_t v;
	size_t len;
	int r;

	if (!text)
		return -EINVAL;
	r = parse_int_at(&p, &st.pid);
	if (r < 0)
		return r;
	if (p[0] != ' ' || p[1] != '(')
		return -EINVAL;
	open = p + 2;
	/* comm is not escaped here: it may hold ')', ") (", spaces and
	 * newlines, but nothing after it can hold a ')'. */
	close = strrchr(open, ')');
	if (!close)
		return -EINVAL;
	len = (size_t)(close - open);
	if (len >= sizeof(st.comm))
		len = sizeof(st.comm) - 1;
	memcpy(st.comm, open, len);
	st.comm[len] = '\0';

	p = close + 1;
	if (p[0] != ' ' || p[1] == '\0' || p[2] != ' ')
		return -EINVAL;
	st.state = p[1];
	p += 3;
	/* Fields 4 (ppid) to 20 (num_threads), each followed by one space. */
	for (int field = 4; field <= 20; field++) {
		r = parse_s64(&p, &v);
		if (r < 0)
			return r;
		if (*p != ' ' && !(field == 20 && (*p == '\0' || *p == '\n')))
			return -EINVAL;
		if (*p == ' ')
			p++;
		switch (field) {
		case 4:
			if (v < INT32_MIN || v > INT32_MAX)
				return -ERANGE;
			st.ppid = (pid_t)v;
			break;
		case 9:
			if (v < 0 || v > UINT32_MAX)
				return -ERANGE;
			st.flags = (unsigned int)v;
			break;
		case 20:
			if (v < 0 || v > INT32_MAX)
				return -ERANGE;
			st.num_threads = (int)v;
			break;
		}
	}
	*ret = st;
	return 0;
}

/* Finds KEY (e.g. "Uid:") at the start of a line; returns the text after
 * it with leading blanks skipped, or NULL. The first occurrence wins: later
 * lines of an fdinfo may quote file names. */
static const char *find_key(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		if (strncmp(line, key, klen) == 0) {
			line += klen;
			while (*line == ' ' || *line == '\t')
				line++;
			return line;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

static int key_int(const char *text, const char *key, int *ret)
{
	const char *p = find_key(text, key);

	if (!p)
		return -ENOENT;
	return parse_int_at(&p, ret);
}

/* COUNT unsigned decimals separated by blanks after KEY, up to 32 bits. */
static int key_ids(const char *text, const char *key, uint32_t *out, size_t count)
{
	const char *p = find_key(text, key);

	if (!p)
		return -EINVAL;
	for (size_t i = 0; i < count; i++) {
		uint64_t v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (parse_u64(&p, 10, &v) < 0 || v > UINT32_MAX)
			return -EINVAL;
		out[i] = (uint32_t)v;
	}
	return 0;
}

int rv_parse_creds(const char *text, struct rv_proc_creds *ret)
{
	struct rv_proc_creds c = {0};
	uint32_t ids[4];
	const char *p;
	int r;

	if (!text)
		return -EINVAL;
	r = key_ids(text, "Uid:", ids, 4);
	if (r < 0)
		return r;
	for (size_t i = 0; i < 4; i++)
		c.uid[i] = ids[i];
	r = key_ids(text, "Gid:", ids, 4);
	if (r < 0)
		return r;
	for (size_t i = 0; i < 4; i++)
		c.gid[i] = ids[i];
	p = find_key(text, "Groups:");
	if (!p)
		return -EINVAL;
	for (;;) {
		uint64_t v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
		if (parse_u64(&p, 10, &v) < 0 || v > UINT32_MAX)
			return -EINVAL;
		if (c.ngroups == RV_CREDS_MAX_GROUPS)
			return -E2BIG;
		c.groups[c.ngroups++] = (gid_t)v;
	}
	p = find_key(text, "CapEff:");
	if (!p || parse_u64(&p, 16, &c.cap_eff) < 0)
		return -EINVAL;
	*ret = c;
	return 0;
}

int rv_parse_status(const char *text, struct rv_proc_status *ret)
{
	struct rv_proc_status st = {0};
	const char *p;
	int v, r;

	if (!text)
		return -EINVAL;

	p = find_key(text, "Uid:");
	if (!p)
		return -EINVAL;
	r = parse_int_at(&p, &v);
	if (r < 0)
		return r;
	st.ruid = (uid_t)v;
	while (*p == ' ' || *p == '\t')
		p++;
	r = parse_int_at(&p, &v);
	if (r < 0)
		return r;
	st.euid = (uid_t)v;

	p = find_key(text, "State:");
	if (!p || *p == '\0' || *p == '\n')
		return -EINVAL;
	st.state = *p;

	r = key_int(text, "Tgid:", &v);
	if (r < 0)
		return r == -ENOENT ? -EINVAL : r;
	st.tgid = v;

	/* Optional: absent without CONFIG_SECCOMP or on old kernels. */
	r = key_int(text, "TracerPid:", &v);
	if (r < 0 && r != -ENOENT)
		return r;
	st.tracer = r < 0 ? 0 : v;
	r = key_int(text, "Seccomp:", &v);
	if (r < 0 && r != -ENOENT)
		return r;
	st.seccomp = r < 0 ? 0 : v;

	/* PPid: (0 for the init process and kernel threads). */
	r = key_int(text, "PPid:", &v);
	if (r < 0 && r != -ENOENT)
		return r;
	st.ppid = r < 0 ? 0 : v;

	/* The signal sets, 64 bits in hex each (all present since 2.6). */
	{
		static const char *const keys[] = {
		    "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:"};
		uint64_t *out[] = {&st.sig_pnd, &st.shd_pnd, &st.sig_blk, &st.sig_ign, &st.sig_cgt};
		size_t found = 0;

		for (size_t i = 0; i < 5; i++) {
			p = find_key(text, keys[i]);
			if (!p)
				continue;
			r = parse_u64(&p, 16, out[i]);
			if (r < 0)
				return r;
			found++;
		}
		st.have_sigsets = found == 5;
	}
	p = find_key(text, "CapEff:");
	if (p) {
		r = parse_u64(&p, 16, &st.cap_eff);
		if (r < 0)
			return r;
		st.have_cap_eff = true;
	}

	/* NSpid: one pid per namespace level, innermost last. */
	st.nspid_inner = st.tgid;
	p = find_key(text, "NSpid:");
	if (p) {
		for (;;) {
			r = parse_int_at(&p, &v);
			if (r < 0)
				return r;
			st.nspid_inner = v;
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '\n' || *p == '\0')
				break;
		}
	}
	*ret = st;
	return 0;
}

int rv_parse_fdinfo(const char *text, struct rv_fdinfo *ret)
{
	struct rv_fdinfo fi = {.mnt_id = -1, .scm_fds = -1, .user_files = -1};
	const char *p;
	uint64_t v;
	int r;

	if (!text)
		return -EINVAL;
	p = find_key(text, "pos:");
	if (!p)
		return -EINVAL;
	r = parse_u64(&p, 10, &fi.pos);
	if (r < 0)
		return r;

	p = find_key(text, "flags:");
	if (!p)
		return -EINVAL;
	r = parse_u64(&p, 8, &v);
	if (r < 0)
		return r;
	if (v > INT32_MAX)
		return -ERANGE;
	fi.flags = (int)v;

	r = key_int(text, "mnt_id:", &fi.mnt_id);
	if (r < 0 && r != -ENOENT)
		return r;
	p = find_key(text, "ino:");
	if (p) {
		r = parse_u64(&p, 10, &fi.ino);
		if (r < 0)
			return r;
	}
	r = key_int(text, "scm_fds:", &fi.scm_fds);
	if (r < 0 && r != -ENOENT)
		return r;
	r = key_int(text, "UserFiles:", &fi.user_files);
	if (r < 0 && r != -ENOENT)
		return r;
	*ret = fi;
	return 0;
}

int rv_fdinfo_next_user_file(const char *text, const char **cursor, char *name, size_t size)
{
	return rv_fdinfo_next_user_slot(text, cursor, name, size, NULL);
}

int rv_fdinfo_next_user_slot(const char *text, const char **cursor, char *name, size_t size,
			     uint32_t *ret_slot)
{
	const char *p = *cursor;

	if (!p) {
		p = find_key(text, "UserFiles:");
		if (!p)
			return 1;
		p = strchr(p, '\n');
		if (!p)
			return 1;
		p++;
	}
	for (;;) {
		const char *q = p, *eol;
		size_t n = 0;
		uint64_t idx;

		/* Entries look like "%5u: NAME"; the first other line ends the list. */
		while (*q == ' ')
			q++;
		if (parse_u64(&q, 10, &idx) < 0 || idx > UINT32_MAX || q[0] != ':' || q[1] != ' ') {
			*cursor = p;
			return 1;
		}
		q += 2;
		eol = strchr(q, '\n');
		if (!eol)
			eol = q + strlen(q);
		p = *eol ? eol + 1 : eol;
		/* Past this entry whatever comes of it: a caller that skips an
		 * entry too long for NAME must get the next one, not this again
		 * (found by tests/fuzz: every scan spun on such a ring). */
		*cursor = p;
		if (eol - q == 6 && strncmp(q, "<none>", 6) == 0)
			continue; /* empty slot (before 6.x kernels) */
		/* seq_file_path() escapes ' ', '\t', '\n' and '\\' as \ooo. */
		while (q < eol) {
			char c = *q++;

			if (c == '\\' && eol - q >= 3 && digit_value(q[0], 8) >= 0 &&
			    digit_value(q[1], 8) >= 0 && digit_value(q[2], 8) >= 0) {
				c = (char)((q[0] - '0') * 64 + (q[1] - '0') * 8 + (q[2] - '0'));
				q += 3;
			}
			if (n + 1 >= size)
				return -ENAMETOOLONG;
			name[n++] = c;
		}
		name[n] = '\0';
		if (ret_slot)
			*ret_slot = (uint32_t)idx;
		return 0;
	}
}

static int parse_u32_hex(const char **p, unsigned int *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(p, 16, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (unsigned int)v;
	return 0;
}

int rv_parse_maps_line(const char *line, struct rv_maps_entry *ret)
{
	struct rv_maps_entry e = {0};
	const char *p = line;
	int r;

	if (!line)
		return -EINVAL;
	r = parse_u64(&p, 16, &e.start);
	if (r < 0)
		return r;
	if (*p++ != '-')
		return -EINVAL;
	r = parse_u64(&p, 16, &e.end);
	if (r < 0)
		return r;
	if (*p++ != ' ' || e.end < e.start)
		return -EINVAL;

	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 's' && p[3] != 'p') || p[4] != ' ')
		return -EINVAL;
	e.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		 (p[2] == 'x' ? PROT_EXEC : 0);
	e.map_flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 5;

	r = parse_u64(&p, 16, &e.offset);
	if (r < 0)
		return r;
	if (*p++ != ' ')
		return -EINVAL;
	r = parse_u32_hex(&p, &e.dev_major);
	if (r < 0)
		return r;
	if (*p++ != ':')
		return -EINVAL;
	r = parse_u32_hex(&p, &e.dev_minor);
	if (r < 0)
		return r;
	if (*p++ != ' ')
		return -EINVAL;
	r = parse_u64(&p, 10, &e.ino);
	if (r < 0)
		return r;
	if (*p != ' ' && *p != '\0' && *p != '\n')
		return -EINVAL;
	while (*p == ' ')
		p++;
	/* The path may hold spaces and end in " (deleted)"; it runs to the
	 * end of the line (the kernel escapes '\n' in it). */
	e.path = (*p && *p != '\n') ? p : NULL;
	*ret = e;
	return 0;
}

int rv_parse_locks_line(const char *line, struct rv_lock_entry *ret)
{
	struct rv_lock_entry e = {0};
	const char *p = line;
	uint64_t v;
	int r;

	if (!line)
		return -EINVAL;
	/* "N:" and, for a waiter, " ->" */
	r = parse_u64(&p, 10, &v);
	if (r < 0)
		return r;
	if (*p++ != ':')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (strncmp(p, "->", 2) == 0)
		p += 2;
	while (*p == ' ')
		p++;
	e.flock = strncmp(p, "FLOCK ", 6) == 0;
	/* class, mode, type: three words */
	for (int w = 0; w < 3; w++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		while (*p == ' ')
			p++;
	}
	r = parse_int_at(&p, &e.pid);
	if (r < 0)
		return r;
	if (*p++ != ' ')
		return -EINVAL;
	/* MAJ:MIN:INO, the numbers in hex, hex, decimal */
	r = parse_u32_hex(&p, &e.dev_major);
	if (r < 0 || *p++ != ':')
		return r < 0 ? r : -EINVAL;
	r = parse_u32_hex(&p, &e.dev_minor);
	if (r < 0 || *p++ != ':')
		return r < 0 ? r : -EINVAL;
	r = parse_u64(&p, 10, &e.ino);
	if (r < 0)
		return r;
	*ret = e;
	return 0;
}

int rv_fdinfo_next_epoll_item(const char *text, const char **cursor, struct rv_epoll_item *ret)
{
	const char *p = *cursor ? *cursor : text;
	struct rv_epoll_item it = {0};
	uint64_t v;
	int64_t pos;
	int r;

	if (!text)
		return -EINVAL;
	/* The next line that starts with "tfd:". */
	for (;;) {
		if (!p || !*p)
			return 1;
		if (strncmp(p, "tfd:", 4) == 0)
			break;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	*cursor = strchr(p, '\n');
	if (*cursor)
		(*cursor)++;
	else
		*cursor = p + strlen(p);
	p += 4;
	while (*p == ' ')
		p++;
	r = parse_int_at(&p, &it.tfd);
	if (r < 0)
		return r;
	while (*p == ' ')
		p++;
	if (strncmp(p, "events:", 7) != 0)
		return -EINVAL;
	p += 7;
	while (*p == ' ')
		p++;
	r = parse_u64(&p, 16, &v);
	if (r < 0 || v > UINT32_MAX)
		return r < 0 ? r : -ERANGE;
	it.events = (uint32_t)v;
	while (*p == ' ')
		p++;
	if (strncmp(p, "data:", 5) != 0)
		return -EINVAL;
	p += 5;
	while (*p == ' ')
		p++;
	r = parse_u64(&p, 16, &it.data);
	if (r < 0)
		return r;
	while (*p == ' ')
		p++;
	if (strncmp(p, "pos:", 4) != 0)
		return -EINVAL;
	p += 4;
	r = parse_s64(&p, &pos);
	if (r < 0)
		return r;
	if (strncmp(p, " ino:", 5) != 0)
		return -EINVAL;
	p += 5;
	r = parse_u64(&p, 16, &it.ino);
	if (r < 0)
		return r;
	if (strncmp(p, " sdev:", 6) != 0)
		return -EINVAL;
	p += 6;
	r = parse_u32_hex(&p, &it.sdev);
	if (r < 0)
		return r;
	*ret = it;
	return 0;
}

int rv_parse_syscall(const char *text, struct rv_proc_syscall *ret)
{
	struct rv_proc_syscall v = {0};
	const char *p = text;
	int64_t nr;
	int r;

	if (!text)
		return -EINVAL;
	/* "running", or "-1 SP PC" outside a syscall: nothing to take. */
	r = parse_s64(&p, &nr);
	if (r < 0 || nr < 0 || nr > INT32_MAX)
		return r < 0 ? r : -ENOENT;
	v.nr = (long)nr;
	for (int i = 0; i < 6; i++) {
		if (p[0] != ' ' || p[1] != '0' || p[2] != 'x')
			return -EINVAL;
		p += 3;
		r = parse_u64(&p, 16, &v.args[i]);
		if (r < 0)
			return r;
	}
	*ret = v;
	return 0;
}
