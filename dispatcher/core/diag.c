// SPDX-License-Identifier: GPL-2.0-or-later
/* diag.c -- collected "file:line: cause" diagnostics */
#include "core/diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

/* Take @msg (formatted) into @d. */
static int diag_take(struct diag *d, char *msg)
{
	if (!msg)
		return -ENOMEM;
	if (d->n == d->alloc) {
		size_t alloc = d->alloc ? d->alloc * 2 : 8;
		char **m = realloc(d->msgs, alloc * sizeof(*m));

		if (!m) {
			free(msg);
			return -ENOMEM;
		}
		d->msgs = m;
		d->alloc = alloc;
	}
	d->msgs[d->n++] = msg;
	return -EINVAL;
}

int diag_addv(struct diag *d, const char *file, int line, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	if (line > 0)
		strbuf_addf(&sb, "%s:%d: ", file ? file : "<input>", line);
	else
		strbuf_addf(&sb, "%s: ", file ? file : "<input>");
	if (strbuf_vaddf(&sb, fmt, ap) < 0) {
		strbuf_release(&sb);
		return -ENOMEM;
	}
	return diag_take(d, strbuf_detach(&sb, NULL));
}

int diag_add_message(struct diag *d, const char *msg)
{
	return diag_take(d, strdup(msg));
}

int diag_add(struct diag *d, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = diag_addv(d, file, line, fmt, ap);
	va_end(ap);
	return r;
}

char *diag_join(const struct diag *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < d->n; i++) {
		if (i)
			strbuf_addch(&sb, '\n');
		strbuf_addstr(&sb, d->msgs[i]);
	}
	return strbuf_detach(&sb, NULL);
}

void diag_release(struct diag *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->msgs[i]);
	free(d->msgs);
	d->msgs = NULL;
	d->n = d->alloc = 0;
}
