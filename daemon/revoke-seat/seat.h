/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* revoke-seat: the interfaces between its files. */
#ifndef REVOKE_SEAT_H
#define REVOKE_SEAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define SEAT_ID_MAX   64
#define USER_NAME_MAX 64
#define MAX_CLASSES   32
#define CLASS_MAX     32
#define MAX_IGNORED   32

/* conf.c: /etc/revoke/seat.conf (revoke-seat.conf(5)). */
struct seat_conf {
	char classes[MAX_CLASSES][CLASS_MAX]; /* udev subsystems to revoke */
	size_t nclasses;
	unsigned int timeout_ms; /* each device's revocation */
	uid_t ignored[MAX_IGNORED];
	size_t nignored;
};

/* Called with the line number and the problem; parsing goes on. */
typedef void (*seat_conf_warn_t)(unsigned int line, const char *what, void *userdata);

void seat_conf_defaults(struct seat_conf *c);
/* Parses F over C (which holds the defaults): every key it knows, the
 * rest warned about and skipped. The number of warnings. */
unsigned int seat_conf_parse(FILE *f, struct seat_conf *c, seat_conf_warn_t warn, void *userdata);
bool seat_conf_revokes(const struct seat_conf *c, const char *subsystem);
bool seat_conf_ignores(const struct seat_conf *c, uid_t uid);

/* logind.c: who is at each seat, from logind on the system bus. */
struct seat_session {
	char id[SEAT_ID_MAX];
	uid_t uid;
	char user[USER_NAME_MAX];
	char seat[SEAT_ID_MAX];
	bool active;
	bool closing; /* logged out, processes left (State "closing") */
};

/* Every session that is on a seat; *RET to free. -errno (the bus error in
 * ERRBUF) when logind could not be asked. */
struct sd_bus;
int logind_sessions(struct sd_bus *bus, struct seat_session **ret, size_t *ret_n, char *errbuf,
		    size_t errsize);

/* devices.c: a seat's devices that udev tags "uaccess". */
struct seat_device {
	char devnode[256];
	char subsystem[CLASS_MAX];
};

/* The devices of SEAT (ID_SEAT, "seat0" when unset) that C revokes, and how
 * many of the seat's uaccess devices it leaves alone. */
int seat_devices(const char *seat, const struct seat_conf *c, struct seat_device **ret,
		 size_t *ret_n, size_t *ret_kept);

/* jobs.c: the queue of revocations. */
void jobs_init(const struct seat_conf *c, const char *state_dir, bool dry_run, bool lib_selects);
int jobs_add(const char *seat, uid_t uid, const char *user, const char *session, const char *reason,
	     uint64_t since_ns);
void jobs_restore(void);
bool jobs_pending(void);
void jobs_step(void);
uint64_t jobs_total_holders(void);

/* main.c: whether UID is the user at SEAT now (as last read from logind). */
bool seat_has_user(const char *seat, uid_t uid);

/* main.c: messages (the journal's priority, or stderr by hand). */
void say(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t now_ns(void);

#endif
