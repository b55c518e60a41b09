/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A terminal of the case's own: a character device that nobody else holds
 * (the shared ones, /dev/null or /dev/kmsg, are held by every logger, and a
 * revoke of one of their nodes reaches every other node of them).
 */
#ifndef REVOKE_TEST_LIB_TERMINAL_H
#define REVOKE_TEST_LIB_TERMINAL_H

#include <stddef.h>

/* A new pty: returns its master (O_CLOEXEC), its slave's path in SLAVE; the
 * case fails otherwise. */
int test_pty(char *slave, size_t len);

#endif
