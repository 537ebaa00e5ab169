/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diag.h -- collected diagnostics ("file:line: cause") from parsers and validators
 *
 * Parsers of job files, board definitions and labd's config report every
 * problem they find, not just the first, so a user fixes a file in one round.
 * Each message is stored fully formatted: "FILE:LINE: CAUSE", or "FILE: CAUSE"
 * when no line is known.  Causes follow the house style: lowercase, no full
 * stop, subjects in single quotes ("unknown driver 'foo'").
 */
#ifndef LABD_DIAG_H
#define LABD_DIAG_H

#include <stdarg.h>
#include <stddef.h>

struct diag {
	char **msgs;
	size_t n;
	size_t alloc;
};

#define DIAG_INIT { NULL, 0, 0 }

/** diag_add() - append "FILE:LINE: CAUSE"; @line <= 0 omits the line. Returns -EINVAL
 * (so parsers can write `return diag_add(...)`) or -ENOMEM. */
int diag_add(struct diag *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int diag_addv(struct diag *d, const char *file, int line, const char *fmt, va_list ap);

/** diag_add_message() - append a copy of @msg, already "FILE:LINE: CAUSE"; as diag_add(). */
int diag_add_message(struct diag *d, const char *msg);

/** diag_has_errors() - whether anything was reported. */
static inline int diag_has_errors(const struct diag *d)
{
	return d->n > 0;
}

/** diag_join() - all messages separated by '\n'; caller frees. NULL on ENOMEM. */
char *diag_join(const struct diag *d);

/** diag_release() - free all messages; @d is empty afterwards. */
void diag_release(struct diag *d);

#endif
