/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /etc/revoke/seat.conf: which device classes revoke-seat takes back, how
 * long each revocation may take, whose processes it never touches
 * (revoke-seat.conf(5)). systemd's syntax: a [Seat] section of KEY=VALUE
 * lines, '#' and ';' comments. A problem is warned about and skipped: the
 * daemon runs on with the rest.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "seat.h"

/* The classes whose open descriptors outlive logind's ACL and are nobody
 * else's business: sound, cameras and TV, media controllers, CD drives and
 * the SCSI generic nodes of scanners and drives, USB devices (printers,
 * cameras, scanners through libusb), firewire audio/video. Left alone: drm
 * (card and render nodes: a compositor keeps them across a switch, logind
 * drops its master), input (evdev: logind revokes what it handed out),
 * hidraw (logind revokes what it hands out on Linux 6.12), misc (kvm: a VM
 * keeps running). */
static const char *const default_classes[] = {
    "sound", "video4linux", "dvb", "media", "block", "scsi_generic", "usb", "usbmisc", "firewire",
};

void seat_conf_defaults(struct seat_conf *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(default_classes) / sizeof(default_classes[0]); i++)
		snprintf(c->classes[c->nclasses++], CLASS_MAX, "%s", default_classes[i]);
	c->timeout_ms = 5000;
}

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* "5", "0.5", "2.25": milliseconds, 1 ms to 600 s. */
static int parse_seconds(const char *s, unsigned int *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.001 && v <= 600))
		return -EINVAL;
	*ret = (unsigned int)(v * 1000 + 0.5);
	return 0;
}

static int parse_uid(const char *s, uid_t *ret)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!errno && end != s && !*end && *s != '-' && v < (uid_t)-1) {
		*ret = (uid_t)v;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -ENOENT;
	*ret = pw->pw_uid;
	return 0;
}

static void warnf(seat_conf_warn_t warn, void *userdata, unsigned int line, unsigned int *n,
		  const char *fmt, const char *arg)
{
	char buf[256];

	snprintf(buf, sizeof(buf), fmt, arg);
	(*n)++;
	if (warn)
		warn(line, buf, userdata);
}

unsigned int seat_conf_parse(FILE *f, struct seat_conf *c, seat_conf_warn_t warn, void *userdata)
{
	char buf[1024], section[64] = "";
	unsigned int line = 0, nwarn = 0;

	while (fgets(buf, sizeof(buf), f)) {
		char *s, *eq, *key, *val, *save = NULL, *w;

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			warnf(warn, userdata, line, &nwarn, "line too long%s", "");
			continue;
		}
		s = strip(buf);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || e[1]) {
				warnf(warn, userdata, line, &nwarn, "bad section header '%s'", s);
				continue;
			}
			*e = 0;
			snprintf(section, sizeof(section), "%s", s + 1);
			if (strcmp(section, "Seat") != 0)
				warnf(warn, userdata, line, &nwarn, "unknown section [%s], ignored",
				      section);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			warnf(warn, userdata, line, &nwarn, "no '=' in '%s'", s);
			continue;
		}
		*eq = 0;
		key = strip(s);
		val = strip(eq + 1);
		if (strcmp(section, "Seat") != 0) {
			warnf(warn, userdata, line, &nwarn, "%s= outside [Seat], ignored", key);
			continue;
		}
		if (strcmp(key, "Classes") == 0) {
			/* Each assignment replaces the list; an empty one
			 * revokes nothing. */
			c->nclasses = 0;
			for (w = strtok_r(val, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
				if (strlen(w) >= CLASS_MAX || c->nclasses == MAX_CLASSES) {
					warnf(warn, userdata, line, &nwarn,
					      "Classes=: '%s' too long or too many, ignored", w);
					continue;
				}
				snprintf(c->classes[c->nclasses++], CLASS_MAX, "%s", w);
			}
		} else if (strcmp(key, "TimeoutSec") == 0) {
			if (parse_seconds(val, &c->timeout_ms) < 0)
				warnf(warn, userdata, line, &nwarn,
				      "TimeoutSec=%s: not a number of seconds from 0.001 to 600, "
				      "ignored",
				      val);
		} else if (strcmp(key, "IgnoreUsers") == 0) {
			c->nignored = 0;
			for (w = strtok_r(val, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
				uid_t uid;

				if (c->nignored == MAX_IGNORED || parse_uid(w, &uid) < 0) {
					warnf(warn, userdata, line, &nwarn,
					      "IgnoreUsers=: no user '%s' (or too many), ignored",
					      w);
					continue;
				}
				c->ignored[c->nignored++] = uid;
			}
		} else {
			warnf(warn, userdata, line, &nwarn, "unknown key %s=, ignored", key);
		}
	}
	return nwarn;
}

bool seat_conf_revokes(const struct seat_conf *c, const char *subsystem)
{
	for (size_t i = 0; i < c->nclasses; i++)
		if (strcmp(c->classes[i], subsystem) == 0)
			return true;
	return false;
}

/* root's processes are the system's (logind itself holds devices): never. */
bool seat_conf_ignores(const struct seat_conf *c, uid_t uid)
{
	if (uid == 0)
		return true;
	for (size_t i = 0; i < c->nignored; i++)
		if (c->ignored[i] == uid)
			return true;
	return false;
}
