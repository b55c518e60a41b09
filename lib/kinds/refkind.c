/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of reference kinds (refkind.h). */
#include "kinds/refkind.h"

static const struct rv_refkind kinds[] = {
    {
	.type = REVOKE_REF_FD,
	.name = "fd",
	.found_in = RV_FOUND_FD_TABLE,
	.add_cut = rv_cut_add_fd,
    },
    {
	.type = REVOKE_REF_MAP,
	.name = "map",
	.found_in = RV_FOUND_MAPS,
	.add_cut = rv_cut_add_map,
    },
    {
	.type = REVOKE_REF_CWD,
	.name = "cwd",
	.found_in = RV_FOUND_LINK,
	.link = "cwd",
	.add_cut = rv_cut_add_cwd,
    },
    {
	.type = REVOKE_REF_ROOT,
	.name = "root",
	.found_in = RV_FOUND_LINK,
	.link = "root",
	.add_cut = rv_cut_add_root,
    },
    {
	.type = REVOKE_REF_EXE,
	.name = "exe",
	.found_in = RV_FOUND_LINK,
	.link = "exe",
	.unreachable = "the running executable",
    },
    {
	.type = REVOKE_REF_URING,
	.name = "uring",
	.found_in = RV_FOUND_FDINFO,
	.add_cut = rv_cut_add_uring,
	.check = rv_uring_check,
    },
    {
	.type = REVOKE_REF_INFLIGHT,
	.name = "inflight",
	.found_in = RV_FOUND_FDINFO,
	.unreachable = "a descriptor in flight in a unix socket",
    },
    {
	.type = REVOKE_REF_SWAP,
	.name = "swap",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "an active swap file",
    },
    {
	.type = REVOKE_REF_LOOP,
	.name = "loop",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "the backing file of a loop device",
    },
    {
	.type = REVOKE_REF_MOUNT,
	.name = "mount",
	.found_in = RV_FOUND_SYSTEM,
	.unreachable = "mounted in another mount namespace",
    },
};

const struct rv_refkind *rv_refkind(int type)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].type == type)
			return &kinds[i];
	return NULL;
}

const struct rv_refkind *rv_refkinds(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(kinds);
	return kinds;
}
