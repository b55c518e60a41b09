/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a case puts its files, gone with the case even when it fails (the
 * harness SIGKILLs the case's process group, so a case cannot clean up after
 * itself):
 *
 *  - test_scratch(): a private tmpfs on /tmp in a mount namespace of the
 *    case's own; victims forked afterwards share it; it vanishes with the
 *    case's last process, device nodes and loop backing files included.
 *    Call it first thing in a case, before forking victims.
 *  - test_scratch_dir(): a directory made from TEMPLATE ("/tmp/x-XXXXXX") in
 *    the host's own /tmp (for cases whose files other namespaces, helpers or
 *    commands must see as they are), removed by a detached reaper once every
 *    process of the case is gone.
 */
#ifndef REVOKE_TEST_LIB_SCRATCH_H
#define REVOKE_TEST_LIB_SCRATCH_H

#include <stddef.h>
#include <sys/types.h>

const char *test_scratch(void);
void test_scratch_dir(char *dir, size_t size, const char *template);

/* Create PATH (mode 0644) holding DATA; the case fails otherwise. */
void test_write_file(const char *path, const char *data);

/* Create PATH anew (O_EXCL, mode 0644) holding CONTENT, then extended to SIZE
 * bytes when SIZE is not 0; the case fails otherwise. */
void test_make_file(const char *path, const char *content, size_t size);

/* Copy FROM to TO (mode MODE): a program to run from elsewhere. */
void test_copy_file(const char *from, const char *to, mode_t mode);

/* Remove DIR and everything in it (not crossing into other mounts'
 * contents it cannot remove anyway): 0, or -1 when DIR is still there. */
int test_remove_tree(const char *dir);

#endif
