/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A seat's devices, from udev's database through sd-device: those tagged
 * "uaccess" (logind gives their ACL to the seat's active user), on the seat
 * their ID_SEAT names (seat0 when unset, as logind reads it). Asked afresh
 * for every revocation, so a device plugged in or moved since counts
 * (main.c follows hotplug only to say what changed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-device.h>

#include "seat.h"

int seat_devices(const char *seat, const struct seat_conf *c, struct seat_device **ret,
		 size_t *ret_n, size_t *ret_kept)
{
	sd_device_enumerator *e = NULL;
	struct seat_device *devs = NULL;
	size_t n = 0, kept = 0;
	int r;

	r = sd_device_enumerator_new(&e);
	if (r < 0)
		return r;
	r = sd_device_enumerator_add_match_tag(e, "uaccess");
	if (r < 0)
		goto out;
	for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
	     d = sd_device_enumerator_get_device_next(e)) {
		const char *node, *subsystem, *id_seat = NULL;
		struct seat_device *p;

		if (sd_device_get_devname(d, &node) < 0 ||
		    sd_device_get_subsystem(d, &subsystem) < 0)
			continue;
		if (sd_device_get_property_value(d, "ID_SEAT", &id_seat) < 0 || !id_seat ||
		    !*id_seat)
			id_seat = "seat0";
		if (strcmp(id_seat, seat) != 0)
			continue;
		if (!seat_conf_revokes(c, subsystem)) {
			kept++;
			continue;
		}
		if (strlen(node) >= sizeof(devs->devnode) || strlen(subsystem) >= CLASS_MAX)
			continue;
		p = realloc(devs, (n + 1) * sizeof(*devs));
		if (!p) {
			r = -ENOMEM;
			goto out;
		}
		devs = p;
		snprintf(devs[n].devnode, sizeof(devs[n].devnode), "%s", node);
		snprintf(devs[n].subsystem, sizeof(devs[n].subsystem), "%s", subsystem);
		n++;
	}
	*ret = devs;
	*ret_n = n;
	*ret_kept = kept;
	devs = NULL;
	r = 0;
out:
	free(devs);
	sd_device_enumerator_unref(e);
	return r;
}
