/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The protocol victims answer on: datagrams over a SOCK_SEQPACKET socketpair
 * (whole messages, EOF when the peer is gone), optionally with one descriptor
 * attached (SCM_RIGHTS). The messages themselves are either struct msg
 * (eight numbers, for victims that run a function of the test: victim_run())
 * or the requests and replies of the victim that performs one system call at
 * a time (struct victim_req/victim_res, victim.h); both travel the same way.
 */
#ifndef REVOKE_TEST_LIB_MSG_H
#define REVOKE_TEST_LIB_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One message between a victim and the test. */
struct msg {
	int64_t v[8];
};
#define MSG(...) ((struct msg){{__VA_ARGS__}})

/* socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC); the case fails otherwise. */
void msg_socketpair(int sv[2]);

/* Send M (through EINTR; a peer gone is not an error here). */
void send_msg(int sock, struct msg m);

/* Receive one message within TIMEOUT_MS (-1: no limit): 0, -ETIMEDOUT,
 * -EPIPE (peer gone) or -errno. */
int recv_msg_timeout(int sock, struct msg *m, int timeout_ms);

/* Victim side: wait for the next message from the test, or die (exit 3) when
 * the test is gone. */
struct msg msg_wait(int sock);

/* Send LEN bytes of BUF as one datagram, FD attached when FD >= 0: 0 or -1. */
int msg_send_fd(int sock, const void *buf, size_t len, int fd);

/* Receive one datagram into BUF (through EINTR): its length or -1; *RET_FD
 * (when not NULL) gets the descriptor attached to it (close-on-exec) or -1. */
ssize_t msg_recv_fd(int sock, void *buf, size_t len, int *ret_fd);

#endif
