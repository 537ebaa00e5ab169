// SPDX-License-Identifier: GPL-2.0-or-later
/* overlay_files.c -- the overlays labd serves to boards, by unguessable name */
#include "overlay/overlay_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define NAME_BYTES 16

struct entry {
	char *name;
	char *path;
	struct entry *next;
};

struct overlay_files {
	struct entry *entries;
	unsigned port;
};

void overlay_files_set_port(struct overlay_files *f, unsigned port)
{
	f->port = port;
}

unsigned overlay_files_port(const struct overlay_files *f)
{
	return f->port;
}

int overlay_files_new(struct overlay_files **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

static void entry_free(struct entry *e)
{
	free(e->name);
	free(e->path);
	free(e);
}

struct overlay_files *overlay_files_free(struct overlay_files *f)
{
	struct entry *e, *next;

	if (!f)
		return NULL;
	for (e = f->entries; e; e = next) {
		next = e->next;
		entry_free(e);
	}
	free(f);
	return NULL;
}

int overlay_files_add(struct overlay_files *f, const char *path, const char *suffix,
		      char **ret_name)
{
	unsigned char rnd[NAME_BYTES];
	char hex[2 * NAME_BYTES + 1];
	struct entry *e;
	size_t i;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	for (i = 0; i < NAME_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", rnd[i]);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->path = strdup(path);
	if (!e->path || asprintf(&e->name, "%s%s", hex, suffix ? suffix : "") < 0 ||
	    !(*ret_name = strdup(e->name))) {
		free(e->path);
		free(e);
		return -ENOMEM;
	}
	e->next = f->entries;
	f->entries = e;
	return 0;
}

void overlay_files_remove(struct overlay_files *f, const char *name)
{
	struct entry **p, *e;

	for (p = &f->entries; name && (e = *p); p = &e->next) {
		if (!strcmp(e->name, name)) {
			*p = e->next;
			entry_free(e);
			return;
		}
	}
}

const char *overlay_files_path(const struct overlay_files *f, const char *name)
{
	const struct entry *e;

	for (e = f->entries; e; e = e->next)
		if (!strcmp(e->name, name))
			return e->path;
	return NULL;
}
