/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers shared by the library, the command and the tests. */
#ifndef REVOKE_UTIL_H
#define REVOKE_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _public_      __attribute__((visibility("default")))
#define _cleanup_(f)  __attribute__((cleanup(f)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* The text of a small file (a /proc file, a marker) PATH under DIRFD in
 * BUF, NUL-terminated: its length, or -errno (open's or read's). One read:
 * /proc's files give all they have up to the buffer's size. */
static inline ssize_t read_text_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC), e;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return n;
}

#define _cleanup_close_	   _cleanup_(closep)
#define _cleanup_free_	   _cleanup_(freep)
#define _cleanup_fclose_   _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
/* A descriptor held only for the variable's lifetime: clang, unlike gcc,
 * warns that a cleanup variable never read is unused. */
#define _held_fd_ __attribute__((unused)) _cleanup_(closep)

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_fd;                                                                               \
	})
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})

/* -errno from the last failed libc call, never 0. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

#endif
