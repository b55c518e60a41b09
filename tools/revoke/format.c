/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text for report fields, shared by the table, the JSON document and messages. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"

struct user_cache {
	uid_t uid;
	char *name; /* NULL: the uid has no name */
};

static struct user_cache *users;
static size_t nusers;

const char *user_name(uid_t uid)
{
	struct user_cache *n;
	struct passwd *pw;
	char *name = NULL;

	for (size_t i = 0; i < nusers; i++)
		if (users[i].uid == uid)
			return users[i].name;

	pw = getpwuid(uid);
	if (pw && pw->pw_name) {
		name = strdup(pw->pw_name);
		if (!name)
			return NULL; /* out of memory: the caller prints the number */
	}
	n = realloc(users, (nusers + 1) * sizeof(*users));
	if (!n)
		return name; /* leaks one short string instead of failing the output */
	users = n;
	users[nusers].uid = uid;
	users[nusers].name = name;
	nusers++;
	return name;
}

const char *open_flags_string(int f, bool cloexec, char *buf, size_t size)
{
	static const struct {
		int flag;
		const char *name;
	} names[] = {
	    {O_APPEND, "append"},     {O_NONBLOCK, "nonblock"},	  {O_DIRECT, "direct"},
	    {O_NOATIME, "noatime"},   {O_DIRECTORY, "directory"}, {O_ASYNC, "async"},
	    {O_NOFOLLOW, "nofollow"},
	};
	const char *acc;
	size_t len;

	if ((f & O_PATH) == O_PATH)
		acc = "path";
	else if ((f & O_ACCMODE) == O_RDONLY)
		acc = "r";
	else if ((f & O_ACCMODE) == O_WRONLY)
		acc = "w";
	else if ((f & O_ACCMODE) == O_RDWR)
		acc = "rw";
	else
		acc = "?";
	len = (size_t)snprintf(buf, size, "%s", acc);

#define ADD(name)                                                                                  \
	do {                                                                                       \
		if (len < size)                                                                    \
			len += (size_t)snprintf(buf + len, size - len, ",%s", (name));             \
	} while (0)
	if (cloexec)
		ADD("cloexec");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & names[i].flag)
			ADD(names[i].name);
	/* O_SYNC contains the O_DSYNC bit */
	if ((f & O_SYNC) == O_SYNC)
		ADD("sync");
	else if (f & O_DSYNC)
		ADD("dsync");
#undef ADD
	return buf;
}

const char *prot_string(int prot, char *buf, size_t size)
{
	snprintf(buf, size, "%c%c%c", prot & PROT_READ ? 'r' : '-', prot & PROT_WRITE ? 'w' : '-',
		 prot & PROT_EXEC ? 'x' : '-');
	return buf;
}

const char *map_flags_string(int prot, int map_flags, char *buf, size_t size)
{
	snprintf(buf, size, "%c%c%c%c", prot & PROT_READ ? 'r' : '-', prot & PROT_WRITE ? 'w' : '-',
		 prot & PROT_EXEC ? 'x' : '-', (map_flags & MAP_SHARED) ? 's' : 'p');
	return buf;
}

static bool holder_failed(const struct revoke_holder *h)
{
	return h->error || h->reason[0];
}

const char *holder_error_string(const struct revoke_holder *h)
{
	if (h->reason[0])
		return h->reason;
	if (h->error)
		return strerror(h->error);
	return "";
}

bool ref_not_cut(const struct revoke_holder *h, const struct revoke_ref *r)
{
	if (r->state == REVOKE_STATE_FAILED || r->state == REVOKE_STATE_UNREACHABLE)
		return true;
	return holder_failed(h) && r->state != REVOKE_STATE_CUT && r->state != REVOKE_STATE_KEPT;
}

const char *ref_error_string(const struct revoke_holder *h, const struct revoke_ref *r)
{
	if (r->state == REVOKE_STATE_CUT || r->state == REVOKE_STATE_KEPT)
		return "";
	/* --description, --recheck: what discovery could not tell, by kind. */
	if (r->state == REVOKE_STATE_UNKNOWN)
		return r->type == REVOKE_REF_MAP ? "cannot tell which description made it: not cut"
		       : r->type == REVOKE_REF_URING
			   ? "cannot tell which description (or mode) the slot holds: not cut"
			   : "cannot tell whose it will be: not cut";
	/* A holder that could not be stopped explains all of its references. */
	if (holder_failed(h))
		return holder_error_string(h);
	if (r->state == REVOKE_STATE_UNREACHABLE && r->error == EOPNOTSUPP && h->reason[0] &&
	    (r->type == REVOKE_REF_CWD || r->type == REVOKE_REF_ROOT))
		return h->reason;
	if ((r->state == REVOKE_STATE_UNREACHABLE || r->state == REVOKE_STATE_FAILED) &&
	    r->type == REVOKE_REF_URING && h->reason[0])
		return h->reason;
	if (r->state == REVOKE_STATE_FAILED && r->type == REVOKE_REF_URING && r->error == EEXIST)
		return "a SINGLE_ISSUER ring: only its submitter thread may update its files";
	if (r->state == REVOKE_STATE_UNREACHABLE && r->error == EOPNOTSUPP)
		return "out of the userspace engine's reach";
	if (r->state == REVOKE_STATE_UNREACHABLE && r->error == ETXTBSY)
		return "executable code mapped from it (a cut would kill the process)";
	if (r->state == REVOKE_STATE_UNREACHABLE && r->error == EBUSY &&
	    (r->type == REVOKE_REF_SWAP || r->type == REVOKE_REF_LOOP))
		return "the kernel holds it (swapoff / losetup -d first)";
	if (r->state == REVOKE_STATE_UNREACHABLE && r->error == EBUSY &&
	    r->type == REVOKE_REF_MOUNT)
		return "the filesystem stays mounted there";
	if (r->error)
		return strerror(r->error);
	return "";
}

/* What each kind of reference shows; the only place that tells them apart. */
static const struct ref_kind ref_kinds[] = {
    [REVOKE_REF_FD] = {REF_FD_NUMBER | REF_OPEN | REF_OFFSET, "fd", NULL},
    [REVOKE_REF_MAP] = {REF_MAP | REF_OFFSET, "mapping", NULL},
    [REVOKE_REF_CWD] = {0, "cwd", NULL},
    [REVOKE_REF_ROOT] = {0, "root", NULL},
    [REVOKE_REF_EXE] = {0, "exe", NULL},
    [REVOKE_REF_URING] = {REF_FD_OTHER | REF_OFFSET, "io_uring fixed file", "ring fd"},
    [REVOKE_REF_INFLIGHT] = {REF_FD_OTHER, "fd in flight", "socket fd"},
    [REVOKE_REF_SWAP] = {0, "swap file", NULL},
    [REVOKE_REF_LOOP] = {0, "loop device backing file", NULL},
    [REVOKE_REF_MOUNT] = {0, "mount in another namespace", NULL},
};

const struct ref_kind *ref_kind(int type)
{
	static const struct ref_kind unknown = {0, "reference", NULL};

	if (type >= 0 && (size_t)type < ARRAY_SIZE(ref_kinds) && ref_kinds[type].noun)
		return &ref_kinds[type];
	return &unknown;
}

const char *ref_describe(const struct revoke_ref *r, char *buf, size_t size)
{
	const struct ref_kind *k = ref_kind(r->type);

	if ((k->fields & REF_FD_NUMBER) && r->fd >= 0)
		snprintf(buf, size, "%s %d", k->noun, r->fd);
	else if ((k->fields & REF_FD_OTHER) && (k->fields & REF_OFFSET) && r->fd >= 0)
		snprintf(buf, size, "%s %" PRIu64 " (%s %d)", k->noun, r->offset, k->fd_label,
			 r->fd);
	else if ((k->fields & REF_FD_OTHER) && r->fd >= 0)
		snprintf(buf, size, "%s (%s %d)", k->noun, k->fd_label, r->fd);
	else if (k->fields & REF_MAP)
		snprintf(buf, size, "%s %" PRIx64 "-%" PRIx64, k->noun, r->start, r->end);
	else
		snprintf(buf, size, "%s", k->noun);
	return buf;
}

const char *comm_safe(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; *s && n + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return buf;
}

const char *target_path(const struct revoke_report *rep, size_t target)
{
	if (target < rep->ntargets && rep->targets[target].path)
		return rep->targets[target].path;
	return "";
}

/* Length of the valid UTF-8 sequence at S (1-4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff)
		return 0;
	return n;
}

const char *utf8_valid(const char *str, char **buf)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *s = (const unsigned char *)str;
	size_t bad = 0, len = 0;
	char *out, *o;

	for (size_t n; s[len]; len += n ? n : 1)
		if ((n = utf8_len(s + len)) == 0)
			bad++;
	if (bad == 0)
		return str;
	out = realloc(*buf, len + bad * (sizeof(replacement) - 2) + 1);
	if (!out)
		return NULL;
	*buf = out;
	for (o = out; *s;) {
		size_t n = utf8_len(s);

		if (n == 0) {
			memcpy(o, replacement, sizeof(replacement) - 1);
			o += sizeof(replacement) - 1;
			s++;
		} else {
			memcpy(o, s, n);
			o += n;
			s += n;
		}
	}
	*o = '\0';
	return out;
}
