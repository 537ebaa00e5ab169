// SPDX-License-Identifier: GPL-2.0-or-later
/* jobstate.c -- names of job states, outcomes, error types and board states */
#include "core/jobstate.h"

#include <errno.h>
#include <string.h>

static const char *const job_state_names[] = {
	[JOB_STATE_QUEUED] = "queued",
	[JOB_STATE_RUNNING] = "running",
	[JOB_STATE_CANCELING] = "canceling",
	[JOB_STATE_FINISHED] = "finished",
};

static const char *const job_health_names[] = {
	[JOB_HEALTH_UNKNOWN] = "unknown",
	[JOB_HEALTH_COMPLETE] = "complete",
	[JOB_HEALTH_INCOMPLETE] = "incomplete",
	[JOB_HEALTH_CANCELED] = "canceled",
};

static const char *const error_type_names[] = {
	[ERROR_NONE] = "none",
	[ERROR_INFRASTRUCTURE] = "infrastructure",
	[ERROR_JOB] = "job",
	[ERROR_TEST] = "test",
	[ERROR_BUG] = "bug",
};

static const char *const device_state_names[] = {
	[DEVICE_STATE_IDLE] = "idle",
	[DEVICE_STATE_RUNNING] = "running",
	[DEVICE_STATE_RESERVED] = "reserved",
	[DEVICE_STATE_MAINTENANCE] = "maintenance",
	[DEVICE_STATE_BAD] = "bad",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, unsigned n, unsigned v)
{
	return v < n && names[v] ? names[v] : "invalid";
}

static int index_of(const char *const *names, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; name && i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	return -EINVAL;
}

#define DEFINE_NAMES(type, prefix, table)                                          \
	const char *prefix##_name(enum type v)                                    \
	{                                                                         \
		return name_of(table, ARRAY_SIZE(table), v);                       \
	}                                                                         \
	int prefix##_from_name(const char *name, enum type *ret)                  \
	{                                                                         \
		int i = index_of(table, ARRAY_SIZE(table), name);                  \
		if (i < 0)                                                        \
			return i;                                                 \
		*ret = (enum type)i;                                              \
		return 0;                                                         \
	}

DEFINE_NAMES(job_state, job_state, job_state_names)
DEFINE_NAMES(job_health, job_health, job_health_names)
DEFINE_NAMES(error_type, error_type, error_type_names)
DEFINE_NAMES(device_state, device_state, device_state_names)
