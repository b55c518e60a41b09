/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who is at each seat: logind's sessions on the system bus (sd-bus). A seat's
 * user is the user of its active session (Active, which logind signals), as
 * long as that session is not closing: at logout logind keeps a session that
 * still has processes (a background program) "closing" and active on its
 * seat, with its user's ACL on the seat's devices, and says nothing on the
 * bus (State emits no PropertiesChanged; main.c watches /run/systemd/sessions
 * for that through sd-login).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "seat.h"

#define LOGIN1 "org.freedesktop.login1"

static int bus_error(sd_bus_error *e, int r, char *errbuf, size_t errsize)
{
	snprintf(errbuf, errsize, "%s", e->message ? e->message : strerror(-r));
	sd_bus_error_free(e);
	return r;
}

int logind_sessions(sd_bus *bus, struct seat_session **ret, size_t *ret_n, char *errbuf,
		    size_t errsize)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct seat_session *list = NULL;
	char(*paths)[128] = NULL;
	size_t n = 0;
	int r;

	r = sd_bus_call_method(bus, LOGIN1, "/org/freedesktop/login1",
			       "org.freedesktop.login1.Manager", "ListSessions", &error, &reply,
			       NULL);
	if (r < 0)
		return bus_error(&error, r, errbuf, errsize);
	r = sd_bus_message_enter_container(reply, 'a', "(susso)");
	if (r < 0)
		goto parse;
	for (;;) {
		const char *id, *user, *seat, *path;
		uint32_t uid;
		void *p;

		r = sd_bus_message_read(reply, "(susso)", &id, &uid, &user, &seat, &path);
		if (r < 0)
			goto parse;
		if (r == 0)
			break;
		if (!*seat || strlen(id) >= SEAT_ID_MAX || strlen(seat) >= SEAT_ID_MAX ||
		    strlen(path) >= sizeof(*paths))
			continue;
		p = realloc(list, (n + 1) * sizeof(*list));
		if (!p) {
			r = -ENOMEM;
			goto parse;
		}
		list = p;
		p = realloc(paths, (n + 1) * sizeof(*paths));
		if (!p) {
			r = -ENOMEM;
			goto parse;
		}
		paths = p;
		list[n] = (struct seat_session){.uid = uid};
		snprintf(list[n].id, sizeof(list[n].id), "%s", id);
		snprintf(list[n].user, sizeof(list[n].user), "%s", user);
		snprintf(list[n].seat, sizeof(list[n].seat), "%s", seat);
		snprintf(paths[n], sizeof(*paths), "%s", path);
		n++;
	}
	sd_bus_message_unref(reply);
	reply = NULL;

	for (size_t i = 0; i < n; i++) {
		char *state = NULL;
		int active = 0;

		r = sd_bus_get_property_trivial(bus, LOGIN1, paths[i],
						"org.freedesktop.login1.Session", "Active", &error,
						'b', &active);
		if (r >= 0)
			r = sd_bus_get_property_string(bus, LOGIN1, paths[i],
						       "org.freedesktop.login1.Session", "State",
						       &error, &state);
		if (r < 0) {
			/* Gone since the list: as if it had not been in it. */
			if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT)) {
				sd_bus_error_free(&error);
				list[i].seat[0] = 0;
				continue;
			}
			free(list);
			free(paths);
			return bus_error(&error, r, errbuf, errsize);
		}
		list[i].active = active;
		list[i].closing = strcmp(state, "closing") == 0;
		free(state);
	}
	free(paths);
	*ret = list;
	*ret_n = n;
	return 0;
parse:
	snprintf(errbuf, errsize, "ListSessions: unexpected reply: %s", strerror(-r));
	sd_bus_message_unref(reply);
	free(list);
	free(paths);
	return r;
}
