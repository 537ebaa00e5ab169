/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * resultfile.h -- result documents written whole or not at all
 *
 * Reports (junit.xml, kcidb.json) are read by other programs while labd
 * runs: each is written to "<path>.tmp" and renamed over @path, so a reader
 * sees the old file or the new one, never a part.  Local files, short
 * writes: called from the loop.
 */
#ifndef LABD_RESULTFILE_H
#define LABD_RESULTFILE_H

#include <stddef.h>

/** resultfile_write() - replace @path by @len bytes of @data; 0 or negative errno. */
int resultfile_write(const char *path, const void *data, size_t len);

/** resultfile_mkdir() - create directory @dir and its parents; 0 or negative errno. */
int resultfile_mkdir(const char *dir);

#endif
