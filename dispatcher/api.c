// SPDX-License-Identifier: GPL-2.0-or-later
/* api.c -- placeholder until the HTTP API lands: refuses to start */
#include "api.h"

#include <errno.h>
#include <stddef.h>

int api_new(struct daemon *d, const char *listen, struct api **ret)
{
	return -EOPNOTSUPP;
}

struct api *api_free(struct api *a)
{
	return NULL;
}

int api_port(const struct api *a)
{
	return 0;
}
