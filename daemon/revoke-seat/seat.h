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

/* cut.c: the revocations, through librevoke (in the cutter, or here). */
#define CUT_DEV_MAX  256
#define CUT_MAX_DEVS 64
#define CUT_MSG_MAX  65536
#define CUT_SOCKET   "/run/revoke/seat-cut.sock"

struct cut_result {
	int error;	      /* errno of the revocation, or 0 */
	unsigned int holders; /* processes cut (or found, dry run) */
	unsigned int refs;    /* their references */
	uint64_t elapsed_us;  /* the revocation's time */
	char pids[512];	      /* "pid 1 (a), pid 2 (b)" */
	char why[256];	      /* the failure, naming the process */
};

bool cut_library_selects(void);
/* Which of DEVS processes of UID hold (HELD[i]); -errno if the listing
 * failed (-EOPNOTSUPP: the library cannot select one user's processes). */
int cut_list_held(uid_t uid, unsigned int timeout_ms, const char *const *devs, size_t n,
		  bool *held);
/* DEV revoked from UID's processes, all or nothing. */
void cut_device(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *dev,
		struct cut_result *res);

/* Every one of N devices revoked from UID's processes in one call (one scan,
 * one stop): all of them or, if one cannot be, none (ERROR, WHY). */
struct cut_all_result {
	int error;
	uint64_t elapsed_us;
	size_t n;
	struct cut_dev_result {
		unsigned int holders, refs;
		char pids[512];
	} dev[CUT_MAX_DEVS];
	char why[256];
};
void cut_devices(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *const *devs,
		 size_t n, struct cut_all_result *res);

/* cutproto.c: the cutter's requests and answers. */
struct cut_request {
	bool list; /* list the held devices */
	bool all;  /* cut all devs in one call; else (neither) cut devs[0] */
	uid_t uid;
	unsigned int timeout_ms;
	bool dry_run;
	size_t ndevs;
	char devs[CUT_MAX_DEVS][CUT_DEV_MAX];
};
bool cut_dev_valid(const char *dev);
int cut_request_format(const struct cut_request *q, char *buf, size_t size);
int cut_request_parse(const char *msg, size_t len, struct cut_request *ret);
int cut_reply_format(const struct cut_result *r, char *buf, size_t size);
int cut_reply_parse(const char *msg, size_t len, struct cut_result *ret);
int cut_all_format(const struct cut_all_result *r, char *buf, size_t size);
int cut_all_parse(const char *msg, size_t len, size_t n, struct cut_all_result *ret);
int cut_held_format(const bool *held, size_t n, char *buf, size_t size);
int cut_held_parse(const char *msg, size_t len, size_t n, bool *held);
int cut_error_parse(const char *msg, size_t len, int *ret);

/* cutter.c: revoke-seat --cutter. */
int cutter_main(void);

/* cutclient.c: the same two calls, through the cutter when there is one. */
int seat_list_held(uid_t uid, unsigned int timeout_ms, const struct seat_device *devs, size_t n,
		   bool *held);
void seat_cut(uid_t uid, unsigned int timeout_ms, bool dry_run, const char *dev,
	      struct cut_result *res);
void seat_cut_all(uid_t uid, unsigned int timeout_ms, bool dry_run, const struct seat_device *devs,
		  size_t n, struct cut_all_result *res);
void seat_cutter_connect(void);

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
