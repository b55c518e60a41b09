/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * revoke-seat - takes a seat's devices back from the users who leave it.
 *
 * logind gives the active session's user an ACL on the seat's "uaccess"
 * devices (sound cards, cameras, scanners...) and takes it away at a switch
 * or a logout, but descriptors already open stay: a background session
 * keeps the microphone. revoke-seat follows who is at each seat (logind on
 * the system bus; /run/systemd/sessions for what logind does not signal),
 * and when a user is no longer at a seat, revokes the seat's devices of the
 * configured classes from that user's processes (jobs.c). It starts from
 * the current state (users already in the background are revoked from at
 * once), reads logind again whenever logind's owner on the bus changes (a
 * restart), reconnects to the bus if it goes, and no error stops it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>
#include <systemd/sd-login.h>

#include <revoke.h>

#include "seat.h"

#ifndef SEAT_CONF
#define SEAT_CONF "/etc/revoke/seat.conf"
#endif
#define MAX_SEATS 32

/* Who is at each seat, as last read. */
struct present {
	char seat[SEAT_ID_MAX];
	bool has;
	uid_t uid;
	char user[USER_NAME_MAX];
	char session[SEAT_ID_MAX];
};

static struct present seats[MAX_SEATS];
static size_t nseats;
static bool synced; /* the first reading is done */
static struct seat_conf conf;
static const char *conf_path = SEAT_CONF;
static sd_event *event;
static sd_bus *bus;
static sd_event_source *resync_src, *work_src, *retry_src;
static uint64_t trigger_ns; /* when the first change since the last reading came */
/* Sessions that became active on a seat since the last reading (signals). */
#define MAX_SEEN 32
static char seen[MAX_SEEN][SEAT_ID_MAX];
static size_t nseen;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Under systemd, stderr is the journal: "<N>" gives the priority. */
void say(int priority, const char *fmt, ...)
{
	static int journal = -1;
	va_list ap;

	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") != NULL;
	if (journal)
		fprintf(stderr, "<%d>", priority);
	else
		fputs("revoke-seat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool seat_has_user(const char *seat, uid_t uid)
{
	for (size_t i = 0; i < nseats; i++)
		if (strcmp(seats[i].seat, seat) == 0)
			return seats[i].has && seats[i].uid == uid;
	return false;
}

static void work_on(void)
{
	if (jobs_pending())
		sd_event_source_set_enabled(work_src, SD_EVENT_ON);
}

static void schedule_resync(void)
{
	int enabled = SD_EVENT_OFF;

	sd_event_source_get_enabled(resync_src, &enabled);
	if (enabled == SD_EVENT_OFF) {
		trigger_ns = now_ns();
		sd_event_source_set_enabled(resync_src, SD_EVENT_ONESHOT);
	}
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec, (void)userdata;
	schedule_resync();
	return 0;
}

static void retry_later(void)
{
	uint64_t now;

	sd_event_now(event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(retry_src, now + 1000000);
	sd_event_source_set_enabled(retry_src, SD_EVENT_ONESHOT);
}

/* Index of SEAT in NOW, or NNOW. */
static size_t seat_index(const struct present *now, size_t nnow, const char *seat)
{
	size_t k;

	for (k = 0; k < nnow && strcmp(now[k].seat, seat) != 0; k++)
		;
	return k;
}

/* Who is at each seat by logind's sessions SS: NOW, *RET_NNOW of them. */
static void who_is_at(const struct seat_session *ss, size_t n, struct present *now,
		      size_t *ret_nnow)
{
	size_t nnow = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k;

		if (!*ss[i].seat)
			continue;
		k = seat_index(now, nnow, ss[i].seat);
		if (k == nnow) {
			if (nnow == MAX_SEATS)
				continue;
			now[nnow++] = (struct present){0};
			snprintf(now[k].seat, sizeof(now[k].seat), "%s", ss[i].seat);
		}
		/* A closing session is a logout whose processes linger. */
		if (ss[i].active && !ss[i].closing) {
			now[k].has = true;
			now[k].uid = ss[i].uid;
			snprintf(now[k].user, sizeof(now[k].user), "%s", ss[i].user);
			snprintf(now[k].session, sizeof(now[k].session), "%s", ss[i].id);
		}
	}
	*ret_nnow = nnow;
}

/* Whoever was at a seat by the last reading and is not in NOW has left. */
static void departures(const struct seat_session *ss, size_t n, const struct present *now,
		       size_t nnow)
{
	for (size_t i = 0; i < nseats; i++) {
		const struct present *old = &seats[i];
		const char *reason = "logout";
		size_t k;

		if (!old->has)
			continue;
		k = seat_index(now, nnow, old->seat);
		if (k < nnow && now[k].has && now[k].uid == old->uid)
			continue;
		for (size_t m = 0; m < n; m++)
			if (strcmp(ss[m].id, old->session) == 0 && !ss[m].closing)
				reason = "switch";
		if (k < nnow && now[k].has)
			say(LOG_INFO, "%s: %s (uid %u) left (%s to %s, session %s)", old->seat,
			    old->user, (unsigned)old->uid, reason, now[k].user, now[k].session);
		else
			say(LOG_INFO,
			    "%s: %s (uid %u) left (%s, session %s); nobody is at the seat",
			    old->seat, old->user, (unsigned)old->uid, reason, old->session);
		jobs_add(old->seat, old->uid, old->user, old->session, reason, trigger_ns);
	}
	for (size_t k = 0; k < nnow; k++) {
		bool was = false;

		for (size_t i = 0; i < nseats; i++)
			if (strcmp(seats[i].seat, now[k].seat) == 0 && seats[i].has && now[k].has &&
			    seats[i].uid == now[k].uid)
				was = true;
		if (now[k].has && !was)
			say(LOG_INFO, "%s: %s (uid %u) is at the seat (session %s)", now[k].seat,
			    now[k].user, (unsigned)now[k].uid, now[k].session);
	}
}

/* Reads logind; whoever was at a seat and is not now has left it. */
static int on_resync(sd_event_source *s, void *userdata)
{
	struct present now[MAX_SEATS];
	struct seat_session *ss = NULL;
	size_t n = 0, nnow = 0;
	char err[256];
	int r;

	(void)s, (void)userdata;
	if (!bus) {
		retry_later();
		return 0;
	}
	r = logind_sessions(bus, &ss, &n, err, sizeof(err));
	if (r < 0) {
		say(LOG_WARNING, "cannot read logind's sessions (%s); trying again in 1 s", err);
		retry_later();
		return 0;
	}
	who_is_at(ss, n, now, &nnow);
	departures(ss, n, now, nnow);
	/* Whoever was at a seat for a moment between two readings left too. */
	for (size_t i = 0; i < nseen; i++)
		for (size_t m = 0; m < n; m++) {
			size_t k;

			if (strcmp(ss[m].id, seen[i]) != 0 || !*ss[m].seat)
				continue;
			k = seat_index(now, nnow, ss[m].seat);
			if (k < nnow && now[k].has && now[k].uid == ss[m].uid)
				continue;
			if (jobs_add(ss[m].seat, ss[m].uid, ss[m].user, ss[m].id, "switch",
				     trigger_ns) > 0)
				say(LOG_INFO,
				    "%s: %s (uid %u) was at the seat for a moment (session %s)",
				    ss[m].seat, ss[m].user, (unsigned)ss[m].uid, ss[m].id);
		}
	nseen = 0;
	/* At start, and after a restart: users with sessions on a seat they
	 * are not at are revoked from now (we did not see them leave). */
	if (!synced)
		for (size_t i = 0; i < n; i++) {
			size_t k;

			if (!*ss[i].seat)
				continue;
			k = seat_index(now, nnow, ss[i].seat);
			if (k < nnow && now[k].has && now[k].uid == ss[i].uid)
				continue;
			if (jobs_add(ss[i].seat, ss[i].uid, ss[i].user, ss[i].id, "startup",
				     trigger_ns) > 0)
				say(LOG_INFO,
				    "%s: %s (uid %u) has a session there but is not at the "
				    "seat",
				    ss[i].seat, ss[i].user, (unsigned)ss[i].uid);
		}
	memcpy(seats, now, nnow * sizeof(now[0]));
	nseats = nnow;
	free(ss);
	if (!synced) {
		synced = true;
		sd_notify(0, "READY=1\nSTATUS=following logind");
	}
	work_on();
	return 0;
}

static int on_work(sd_event_source *s, void *userdata)
{
	(void)userdata;
	jobs_step();
	if (!jobs_pending()) {
		sd_event_source_set_enabled(s, SD_EVENT_OFF);
		sd_notifyf(0, "STATUS=following logind; %llu holders cut since start",
			   (unsigned long long)jobs_total_holders());
	}
	return 0;
}

static int on_logind_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	(void)m, (void)userdata, (void)error;
	schedule_resync();
	return 0;
}

/*
 * A seat's ActiveSession changed: the session that became active is kept
 * until the next reading, so that a user at the seat for a moment only (two
 * switches while a revocation held the loop: alice, bob, alice) is seen to
 * leave too, not lost between two readings.
 */
static int on_seat_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *iface = NULL;

	(void)userdata, (void)error;
	schedule_resync();
	if (sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, "org.freedesktop.login1.Seat"))
		return 0;
	if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
		return 0;
	while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
		const char *name = NULL, *id = NULL, *path = NULL;

		if (sd_bus_message_read(m, "s", &name) < 0)
			return 0;
		if (strcmp(name, "ActiveSession") == 0 &&
		    sd_bus_message_read(m, "v", "(so)", &id, &path) >= 0 && id && *id &&
		    nseen < MAX_SEEN && strlen(id) < SEAT_ID_MAX)
			snprintf(seen[nseen++], SEAT_ID_MAX, "%s", id);
		else if (sd_bus_message_skip(m, "v") < 0)
			return 0;
		if (sd_bus_message_exit_container(m) < 0)
			return 0;
	}
	return 0;
}

static int on_login_files(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s, (void)fd, (void)revents;
	sd_login_monitor_flush(userdata);
	schedule_resync();
	return 0;
}

static int on_device(sd_device_monitor *m, sd_device *d, void *userdata)
{
	const char *node = NULL, *subsystem = NULL, *seat = NULL;
	sd_device_action_t action;

	(void)m, (void)userdata;
	if (sd_device_get_action(d, &action) < 0 ||
	    (action != SD_DEVICE_ADD && action != SD_DEVICE_REMOVE))
		return 0;
	if (sd_device_get_devname(d, &node) < 0)
		return 0;
	(void)sd_device_get_subsystem(d, &subsystem);
	if (sd_device_get_property_value(d, "ID_SEAT", &seat) < 0 || !seat || !*seat)
		seat = "seat0";
	say(LOG_DEBUG, "%s: %s %s (%s, %s)", seat, action == SD_DEVICE_ADD ? "added" : "removed",
	    node, subsystem ? subsystem : "?",
	    subsystem && seat_conf_revokes(&conf, subsystem) ? "revoked from who leaves"
							     : "kept by Classes=");
	return 0;
}

static int bus_connect(void);
static void reconnect_later(void);

static int on_reconnect(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec, (void)userdata;
	if (bus_connect() < 0)
		reconnect_later();
	return 0;
}

static void reconnect_later(void)
{
	sd_event_source *t = NULL;

	if (sd_event_add_time_relative(event, &t, CLOCK_MONOTONIC, 1000000, 0, on_reconnect,
				       NULL) >= 0) {
		sd_event_source_set_floating(t, 1);
		sd_event_source_unref(t);
	}
}

static int on_disconnect(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	(void)m, (void)userdata, (void)error;
	say(LOG_WARNING, "lost the system bus; connecting again in 1 s");
	sd_bus_detach_event(bus);
	bus = sd_bus_close_unref(bus);
	reconnect_later();
	return 0;
}

static int bus_connect(void)
{
	static const char *const manager_signals[] = {"SessionNew", "SessionRemoved", "SeatNew",
						      "SeatRemoved"};
	sd_bus *b = NULL;
	int r;

	r = sd_bus_open_system(&b);
	if (r >= 0)
		r = sd_bus_attach_event(b, event, 0);
	if (r >= 0)
		r = sd_bus_match_signal(b, NULL, "org.freedesktop.DBus.Local", NULL,
					"org.freedesktop.DBus.Local", "Disconnected", on_disconnect,
					NULL);
	for (size_t i = 0; r >= 0 && i < sizeof(manager_signals) / sizeof(manager_signals[0]); i++)
		r = sd_bus_match_signal_async(b, NULL, "org.freedesktop.login1",
					      "/org/freedesktop/login1",
					      "org.freedesktop.login1.Manager", manager_signals[i],
					      on_logind_signal, NULL, NULL);
	/* Seats' ActiveSession, sessions' Active. */
	if (r >= 0)
		r = sd_bus_match_signal_async(b, NULL, "org.freedesktop.login1", NULL,
					      "org.freedesktop.DBus.Properties",
					      "PropertiesChanged", on_seat_changed, NULL, NULL);
	/* logind restarted (or started): everything again. */
	if (r >= 0)
		r = sd_bus_add_match_async(
		    b, NULL,
		    "type='signal',sender='org.freedesktop.DBus',"
		    "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
		    "arg0='org.freedesktop.login1'",
		    on_logind_signal, NULL, NULL);
	if (r < 0) {
		say(LOG_ERR, "system bus: %s", strerror(-r));
		sd_bus_close_unref(b);
		return r;
	}
	bus = b;
	schedule_resync();
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s, (void)userdata;
	if (si->ssi_signo == SIGHUP) {
		struct seat_conf c;
		FILE *f = fopen(conf_path, "re");

		seat_conf_defaults(&c);
		if (f) {
			seat_conf_parse(f, &c, NULL, NULL);
			fclose(f);
		}
		/* The running job keeps the devices it listed. */
		conf = c;
		say(LOG_INFO, "%s read again", conf_path);
		return 0;
	}
	if (jobs_pending())
		say(LOG_NOTICE, "stopping with revocations queued: the next revoke-seat does "
				"them");
	sd_event_exit(event, 0);
	return 0;
}

static void conf_warn(unsigned int line, const char *what, void *userdata)
{
	say(LOG_WARNING, "%s:%u: %s", (const char *)userdata, line, what);
}

/* --list: each seat, who is at it, its devices and what would happen to
 * them. */
static int list(void)
{
	struct seat_session *ss = NULL;
	size_t n = 0;
	char err[256];
	int r;

	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "revoke-seat: system bus: %s\n", strerror(-r));
		return 1;
	}
	r = logind_sessions(bus, &ss, &n, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "revoke-seat: logind: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct seat_device *devs = NULL;
		size_t nd = 0, kept = 0;
		bool first = true;

		for (size_t k = 0; k < i; k++)
			if (strcmp(ss[k].seat, ss[i].seat) == 0)
				first = false;
		if (!first)
			continue;
		printf("%s:", ss[i].seat);
		for (size_t k = 0; k < n; k++)
			if (strcmp(ss[k].seat, ss[i].seat) == 0)
				printf(" %s(session %s, uid %u%s)", ss[k].user, ss[k].id,
				       (unsigned)ss[k].uid,
				       ss[k].closing  ? ", closing"
				       : ss[k].active ? ", at the seat"
						      : "");
		printf("\n");
		r = seat_devices(ss[i].seat, &conf, &devs, &nd, &kept);
		if (r < 0) {
			fprintf(stderr, "revoke-seat: %s: devices: %s\n", ss[i].seat, strerror(-r));
			continue;
		}
		for (size_t k = 0; k < nd; k++)
			printf("  revoke %-12s %s\n", devs[k].subsystem, devs[k].devnode);
		printf("  (%zu more uaccess devices kept by Classes=)\n", kept);
		free(devs);
	}
	free(ss);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: revoke-seat [options]\n\n"
		"Take a seat's devices back from the users who leave it: when a user is no\n"
		"longer at a seat (a switch, a logout), revoke the seat's uaccess devices from\n"
		"that user's processes.\n\n"
		"Options:\n"
		" -c, --config FILE   read FILE instead of " SEAT_CONF "\n"
		" -n, --dry-run       find and log the holders, cut nothing\n"
		" -l, --list          show each seat, its users and its devices, and exit\n"
		"     --cutter        serve revoke-seat's revocations on the socket systemd\n"
		"                       passes (revoke-seat-cut.service)\n"
		" -h, --help          display this help\n"
		" -V, --version       display version\n\n"
		"See revoke-seat(8) and revoke-seat.conf(5).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"list", no_argument, NULL, 'l'},
	    {"cutter", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	sd_login_monitor *lm = NULL;
	sd_device_monitor *dm = NULL;
	bool dry_run = false, list_only = false, cutter = false;
	const char *state_dir;
	sigset_t mask;
	FILE *f;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:nlhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			conf_path = optarg;
			break;
		case 'n':
			dry_run = true;
			break;
		case 'l':
			list_only = true;
			break;
		case 'C':
			cutter = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("revoke-seat from librevoke %s\n", revoke_version());
			return 0;
		default:
			fprintf(stderr, "Try 'revoke-seat --help' for more information.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "revoke-seat: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	if (cutter)
		return cutter_main();
	seat_conf_defaults(&conf);
	f = fopen(conf_path, "re");
	if (f) {
		seat_conf_parse(f, &conf, conf_warn, (void *)conf_path);
		fclose(f);
	} else if (errno != ENOENT || strcmp(conf_path, SEAT_CONF) != 0) {
		say(LOG_WARNING, "%s: %m; using the defaults", conf_path);
	}
	if (list_only)
		return list();

	if (!cut_library_selects())
		say(LOG_ERR,
		    "librevoke %s cannot revoke from one user's processes (1.4 can): "
		    "nothing will be revoked",
		    revoke_version());
	state_dir = getenv("RUNTIME_DIRECTORY");
	jobs_init(&conf, state_dir, dry_run, cut_library_selects());

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_default(&event);
	if (r < 0) {
		say(LOG_ERR, "sd_event: %s", strerror(-r));
		return 1;
	}
	sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
	sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
	sd_event_add_signal(event, NULL, SIGHUP, on_signal, NULL);
	/* Readings of logind first, then bus traffic, then one step of work:
	 * a switch during a revocation is seen between two devices. */
	sd_event_add_defer(event, &resync_src, on_resync, NULL);
	sd_event_source_set_priority(resync_src, SD_EVENT_PRIORITY_IMPORTANT);
	sd_event_source_set_enabled(resync_src, SD_EVENT_OFF);
	sd_event_add_defer(event, &work_src, on_work, NULL);
	sd_event_source_set_priority(work_src, SD_EVENT_PRIORITY_IDLE);
	sd_event_source_set_enabled(work_src, SD_EVENT_OFF);
	sd_event_add_time(event, &retry_src, CLOCK_MONOTONIC, UINT64_MAX, 0, on_retry, NULL);
	sd_event_source_set_enabled(retry_src, SD_EVENT_OFF);

	/* What logind writes but does not signal: a session going "closing". */
	r = sd_login_monitor_new(NULL, &lm);
	if (r >= 0)
		r = sd_event_add_io(event, NULL, sd_login_monitor_get_fd(lm),
				    (uint32_t)sd_login_monitor_get_events(lm), on_login_files, lm);
	if (r < 0)
		say(LOG_WARNING, "cannot watch /run/systemd for logouts: %s", strerror(-r));

	r = sd_device_monitor_new(&dm);
	if (r >= 0)
		r = sd_device_monitor_filter_add_match_tag(dm, "uaccess");
	if (r >= 0)
		r = sd_device_monitor_attach_event(dm, event);
	if (r >= 0)
		r = sd_device_monitor_start(dm, on_device, NULL);
	if (r < 0)
		say(LOG_WARNING, "cannot follow udev's hotplug events: %s", strerror(-r));

	jobs_restore();
	seat_cutter_connect();
	if (bus_connect() < 0)
		reconnect_later();
	say(LOG_INFO, "following logind's seats%s; revoking %s from who leaves one",
	    dry_run ? " (dry run: nothing is cut)" : "",
	    conf.nclasses ? "the classes of Classes=" : "nothing (Classes= is empty)");
	r = sd_event_loop(event);
	sd_device_monitor_unref(dm);
	sd_login_monitor_unref(lm);
	sd_bus_flush_close_unref(bus);
	sd_event_unref(event);
	return r < 0 ? 1 : 0;
}
