/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cfgtext.h -- a libconfig file and every file its @include lines reach,
 * checked before libconfig 1.5 reads them
 *
 * libconfig 1.5's scanner exits the process on an include it opens but
 * cannot read (a directory: any name cut short by a NUL byte, or made of two
 * files' text).  labd (labd.conf, the board files) and labctl (its config
 * file) call cfg_check_text() first and hand the file to libconfig only when
 * it returns 0.  Not tied to libconfig's API: it reads the text only.
 */
#ifndef LABD_CFGTEXT_H
#define LABD_CFGTEXT_H

struct diag;

/**
 * cfg_check_text() - whether libconfig may read @path, whose includes are
 * relative to @include_dir (what config_set_include_dir() was given): it and
 * every file its @include lines name, at any depth, are text files (no NUL
 * byte), every include names a regular file and closes its name in its own
 * file.  A file that cannot be opened is left to libconfig (not reported).
 * Returns 0, -EINVAL (each problem reported to @diag as "FILE:LINE: cause")
 * or -ENOMEM.
 */
int cfg_check_text(const char *path, const char *include_dir, struct diag *diag);

#endif
