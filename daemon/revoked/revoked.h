/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* revoked: the limits of the loop (revoked.c) and serving one request (serve.c). */
#ifndef REVOKED_H
#define REVOKED_H

#include <stddef.h>
#include <sys/socket.h>

#include "helper/proto.h"

struct revoked_limits {
	unsigned int max_running;	  /* requests served at once */
	unsigned int max_running_per_uid; /* of them, from one uid */
	unsigned int rate_per_uid;	  /* requests per uid and second (and burst) */
	unsigned int max_timeout_ms;	  /* the longest timeout a request may ask for */
};

/*
 * Serve one request in a child process of its own: the client CRED on SOCK
 * asked HR for FDS (which this takes). Checks, runs the engine, logs, and
 * writes the reply. Returns the exit status of the child.
 */
int revoked_serve(int sock, const struct ucred *cred, const struct rv_helper_req *hr, int *fds,
		  size_t nfds, const struct revoked_limits *limits);

#endif
