// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c -- leveled diagnostics on stderr */
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <sys/time.h>

static enum log_level max_level = LOG_LEVEL_INFO;
static bool timestamps;

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARNING] = "warning",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	max_level = level;
}

void log_set_timestamps(bool on)
{
	timestamps = on;
}

bool log_is_enabled(enum log_level level)
{
	return level <= max_level;
}

void log_msgv(enum log_level level, const char *fmt, va_list ap)
{
	int saved_errno = errno;	/* keep %m working for the caller */
	char stamp[32] = "";

	if (level > max_level)
		return;
	if (timestamps) {
		struct timeval tv;
		struct tm tm;

		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		snprintf(stamp, sizeof(stamp), "%02d:%02d:%02d.%03d ", tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)(tv.tv_usec / 1000));
	}
	flockfile(stderr);
	fprintf(stderr, "%slabd: %s: ", stamp, level_names[level]);
	errno = saved_errno;
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msgv(level, fmt, ap);
	va_end(ap);
}
