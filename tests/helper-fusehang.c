/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * helper-fusehang MOUNTPOINT: a FUSE filesystem with one file, /file (4096
 * bytes of 'x'), served normally until SIGUSR1; from then on every request
 * blocks forever, like a server that stopped answering. Attributes and
 * entries are never cached (timeouts 0), so any operation that asks the
 * server hangs. Runs in the foreground, single-threaded; the test kills it.
 * With FUSEHANG_FLUSH_MS=N in the environment each flush (every close of
 * the file, a dup3 over a descriptor of it) takes N ms: a slow server.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_SIZE 4096

static volatile sig_atomic_t hung;
static unsigned int flush_ms;

static void on_usr1(int sig)
{
	(void)sig;
	hung = 1;
}

static void maybe_hang(void)
{
	while (hung)
		pause();
}

static void *fh_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->kernel_cache = 1; /* keep pages so that the mapping stays valid */
	return NULL;
}

static int fh_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	maybe_hang();
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		st->st_ino = 1;
		return 0;
	}
	if (strcmp(path, "/file") == 0) {
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
		st->st_size = FILE_SIZE;
		st->st_ino = 2;
		return 0;
	}
	return -ENOENT;
}

static int fh_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	maybe_hang();
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "file", NULL, 0, 0);
	return 0;
}

static int fh_open(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	maybe_hang();
	return strcmp(path, "/file") == 0 ? 0 : -ENOENT;
}

static int fh_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	maybe_hang();
	if (off >= FILE_SIZE)
		return 0;
	if ((size_t)(FILE_SIZE - off) < size)
		size = (size_t)(FILE_SIZE - off);
	memset(buf, 'x', size);
	return (int)size;
}

static int fh_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	maybe_hang();
	if (flush_ms)
		usleep(flush_ms * 1000);
	return 0;
}

static const struct fuse_operations ops = {
    .init = fh_init,
    .getattr = fh_getattr,
    .readdir = fh_readdir,
    .open = fh_open,
    .read = fh_read,
    .flush = fh_flush,
};

int main(int argc, char **argv)
{
	char *args[] = {argv[0], "-f", "-s", "-o", "auto_unmount", argc > 1 ? argv[1] : NULL, NULL};
	struct sigaction sa = {.sa_handler = on_usr1};

	if (argc != 2) {
		fprintf(stderr, "usage: %s MOUNTPOINT\n", argv[0]);
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	if (getenv("FUSEHANG_FLUSH_MS"))
		flush_ms = (unsigned int)strtoul(getenv("FUSEHANG_FLUSH_MS"), NULL, 10);
	return fuse_main(6, args, &ops, NULL);
}
