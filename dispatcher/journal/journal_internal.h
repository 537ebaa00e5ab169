/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal_internal.h -- what the files of journal/ share; only they include it
 */
#ifndef LABD_JOURNAL_INTERNAL_H
#define LABD_JOURNAL_INTERNAL_H

#include <stddef.h>

/* journal_write_all() - all @len bytes of @data to @fd (EINTR retried): 0 or -errno. */
int journal_write_all(int fd, const void *data, size_t len);

#endif
