/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramdisk.h -- adding archives to a deployed ramdisk
 *
 * Linux unpacks every cpio archive it finds in its initramfs, one after the
 * other, compressed or not, into the same root file system.  So labd adds
 * files to a job's ramdisk (the test overlay, the deploy's kernel modules)
 * by appending a second archive to it, without unpacking the first.
 *
 * A ramdisk wrapped for U-Boot's bootm (`mkimage -T ramdisk`: a 64-byte
 * legacy image header, magic 0x27051956) gets its header rewritten: the data
 * size, the data CRC32 and the header CRC32; everything else is kept.
 */
#ifndef LABD_RAMDISK_H
#define LABD_RAMDISK_H

#include <stdbool.h>
#include <stddef.h>

#define RAMDISK_UIMAGE_HEADER 64

/**
 * ramdisk_append() - append the file @extra to the ramdisk @path
 * @uboot: the ramdisk must carry a U-Boot header (the job said `header: u-boot`);
 *	   without it, a header found is still rewritten
 * @err: a one-line reason on failure
 *
 * The ramdisk is rewritten in place (a copy renamed over it, so a failure
 * leaves it as it was).  Returns 0 or a negative errno.
 */
int ramdisk_append(const char *path, const char *extra, bool uboot, char *err, size_t errlen);

/** ramdisk_has_uboot_header() - whether @path starts with a U-Boot legacy ramdisk header. */
bool ramdisk_has_uboot_header(const char *path);

#endif
