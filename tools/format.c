/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text for report fields, shared by the table, the JSON document and messages. */
#include <fcntl.h>
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

const char *map_flags_string(int prot, int map_flags, char *buf, size_t size)
{
	snprintf(buf, size, "%c%c%c%c", prot & PROT_READ ? 'r' : '-', prot & PROT_WRITE ? 'w' : '-',
		 prot & PROT_EXEC ? 'x' : '-', (map_flags & MAP_SHARED) ? 's' : 'p');
	return buf;
}

const char *holder_error_string(const struct revoke_holder *h)
{
	if (h->reason[0])
		return h->reason;
	if (h->error)
		return strerror(h->error);
	return "";
}

const char *ref_error_string(const struct revoke_holder *h, const struct revoke_ref *r)
{
	/* A holder that could not be stopped explains all of its references. */
	if (h->error || h->reason[0])
		return holder_error_string(h);
	if (r->error)
		return strerror(r->error);
	return "";
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

const char *target_path(const struct revoke_report *rep, unsigned int target)
{
	if (target < rep->ntargets && rep->targets[target].path)
		return rep->targets[target].path;
	return "";
}
