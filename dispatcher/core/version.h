/* SPDX-License-Identifier: GPL-2.0-or-later */
/* version.h -- labd's version, shown by labd, labctl and the API's /health */
#ifndef LABD_VERSION_H
#define LABD_VERSION_H

#ifndef LABD_VERSION
#define LABD_VERSION "0.1.0"
#endif

#endif
