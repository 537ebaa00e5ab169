/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lava_device.h -- a LAVA device dictionary as a labd board definition
 *
 * import/ owns what turns another lab system's definitions into labd's files,
 * for the `labd import-*` commands of main.c (nothing in the daemon uses it).
 *
 * `labd import-lava-device FILE` helps a LAVA lab move to labd (doc/lava-compat.md):
 *
 *   FILE.jinja2   a device dictionary as LAVA admins write them: one
 *                 `{% extends 'TYPE.jinja2' %}` and `{% set key = value %}`
 *                 lines (a value may span lines).  That is a tiny line
 *                 format, read here line by line, not a template engine:
 *                 values are YAML-compatible literals ('x', "x", 12, [..],
 *                 {..}, ( "x" )) or the name of a variable set before.
 *                 The board gets type TYPE, which labd must also have (import
 *                 a rendered dictionary of that type to get one).
 *   FILE.yaml     a rendered device dictionary (lava-server's
 *                 `lavacli devices dict get --render`): the board and its
 *                 device type, named as the dictionary's `devicetype` (else
 *                 @type, else "<name>-type", noted), with a group per boot
 *                 method labd has (the bootloaders' prompts, keys, errors
 *                 and command sets, qemu's binary and options, fastboot's
 *                 serial number), load addresses and kernel start message.
 *                 A key given twice is taken as PyYAML does (the last).
 *
 * What is converted: the console command (telnet HOST PORT, nc HOST PORT,
 * microcom/picocom/screen on a tty: labd's telnet, tcp and tty drivers;
 * the connection tagged "primary" of several), the power commands
 * (power_on/power_off and hard_reset: the command power driver; a list of
 * commands runs as one `a && b`), and from a rendered dictionary its boot
 * methods, each kernel command line with {EXTRA_KERNEL_ARGS} (the jobs'
 * `context: extra_kernel_args`, as LAVA renders it).  Every setting that is
 * not converted is named in @notes with the reason, one line each.  The definition is written with libconfig's own
 * writer, as a board file of the devices directory.
 */
#ifndef LABD_LAVA_DEVICE_H
#define LABD_LAVA_DEVICE_H

struct diag;
struct strbuf;

/**
 * lava_device_import() - convert the dictionary in file @path
 * @name: the board's name, or NULL: the dictionary's hostname, else the
 *	file's name without its extension
 * @type: its device type's name, or NULL: the dictionary's (jinja2:
 *	extends; rendered: devicetype), else "<name>-type"
 * @out: gets the board definition (libconfig text) appended
 * @notes: what could not be converted, and why
 *
 * Returns 0, -EINVAL (not a device dictionary: why in @notes), -ENOMEM or
 * another negative errno reading @path.
 */
int lava_device_import(const char *path, const char *name, const char *type,
		       struct strbuf *out, struct diag *notes);

#endif
