/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A character device for the cases that revoke one: a revoke of any node of
 * a device reaches every other node of it, so the device must be one that no
 * process but the case's holds (/dev/kmsg and /dev/fuse are held by loggers
 * and daemons; a pty slave cannot be opened through a node outside devpts).
 */
#ifndef REVOKE_TEST_LIB_DEVICE_H
#define REVOKE_TEST_LIB_DEVICE_H

#include <sys/types.h>

/* The device the cases use: cpu_dma_latency (misc), which only latency
 * tuners hold (opening it adds a request with the default value: no effect
 * until one is written). */
#define TEST_DEVICE "/dev/cpu_dma_latency"

/* TEST_DEVICE's number; SKIPs the case when it is missing or when a process
 * already holds it (a revoke would cut that process's descriptor). */
dev_t test_unheld_device(void);

#endif
