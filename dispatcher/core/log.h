/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h -- labd's own diagnostic log (not a job's console log)
 *
 * Messages go to stderr, one line each, prefixed with a level; under systemd
 * the journal adds timestamps.  Library-like modules (loop, parsers, store)
 * return errors instead of logging; the runner, the API handlers and main()
 * log once, with context.  Message style: lowercase, no full stop, subject in
 * single quotes: "cannot open console '/dev/ttyUSB3': Permission denied".
 */
#ifndef LABD_LOG_H
#define LABD_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARNING,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/** log_set_level() - messages above @level are dropped (default: info). */
void log_set_level(enum log_level level);

/** log_set_timestamps() - prefix each line with the wall-clock time. */
void log_set_timestamps(bool on);

/** log_is_enabled() - whether a message at @level would be printed. */
bool log_is_enabled(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_msgv(enum log_level level, const char *fmt, va_list ap);

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
