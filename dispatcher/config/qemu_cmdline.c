// SPDX-License-Identifier: GPL-2.0-or-later
/* qemu_cmdline.c -- QEMU's argv from the device type and the job's allowed variables */
#include "config/qemu_cmdline.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"

#define QEMU_VAR_MAX 64		/* bytes of a variable name */

struct qemu_subst {
	const struct qemu_cmdline_in *in;
	char name[QEMU_VAR_MAX];
	bool from_job;		/* the value just looked up came from the job */
	char *own;		/* labd's own value, built on demand */
};

/* Whether the job may set @name: an allowed artifact's variable, or APPEND. */
static bool job_may_set(const struct device_type *t, const char *name)
{
	char label[QEMU_VAR_MAX];
	size_t i;

	if (!strcmp(name, "APPEND"))
		return true;
	if (!strcmp(name, "RAMDISK") || !strcmp(name, "INITRD"))
		return strv_contains(t->qemu.allowed_images, "ramdisk") ||
		       strv_contains(t->qemu.allowed_images, "initrd");
	for (i = 0; name[i] && i < sizeof(label) - 1; i++)
		label[i] = (char)tolower((unsigned char)name[i]);
	label[i] = '\0';
	return strv_contains(t->qemu.allowed_images, label);
}

static const char *own_value(struct qemu_subst *s)
{
	const struct qemu_cmdline_in *in = s->in;

	free(s->own);
	s->own = NULL;
	if (!strcmp(s->name, "TFTP_ROOT"))
		return in->config->tftp_root;
	if (!strcmp(s->name, "DEVICE"))
		return in->dev->name;
	if (!strcmp(s->name, "BOARD_DIR") &&
	    asprintf(&s->own, "%s/boards/%s", in->config->state_dir, in->dev->name) >= 0)
		return s->own;
	return NULL;
}

static const char *lookup(struct qemu_subst *s)
{
	const struct device_type *t = s->in->dev->type;
	const char *v = NULL;

	s->from_job = false;
	if (job_may_set(t, s->name) && s->in->job_vars)
		v = kv_get(s->in->job_vars, s->name);
	if (v) {
		s->from_job = true;
		return v;
	}
	if (!strcmp(s->name, "APPEND"))
		return t->qemu.append_default ? t->qemu.append_default : "";
	v = own_value(s);
	return v ? v : device_param(s->in->dev, s->name);
}

/* The length of the variable name at @p (after '{'), 0 if this is no variable. */
static size_t var_len(const char *p)
{
	size_t n = 0;

	while (p[n] && (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]) ||
			p[n] == '_'))
		n++;
	return n && n < QEMU_VAR_MAX && p[n] == '}' ? n : 0;
}

/* Substitute one element of `args` into @out. */
static int subst_arg(struct qemu_subst *s, const char *arg, struct strbuf *out, char *err,
		     size_t errlen)
{
	const char *p = arg, *v;
	size_t n;

	while (*p) {
		n = *p == '{' ? var_len(p + 1) : 0;
		if (!n) {
			if (strbuf_addch(out, *p++) < 0)
				return -ENOMEM;
			continue;
		}
		memcpy(s->name, p + 1, n);
		s->name[n] = '\0';
		v = lookup(s);
		if (!v) {
			snprintf(err, errlen, "QEMU argument '%s' of device type '%s' needs {%s}, which is not defined (deploy it, or set it in the device's parameters)",
				 arg, s->in->dev->type->name, s->name);
			return -EINVAL;
		}
		if (s->from_job && strchr(v, ',') && strlen(arg) != n + 2) {
			snprintf(err, errlen, "{%s} holds a comma and cannot go into QEMU argument '%s'",
				 s->name, arg);
			return -EINVAL;
		}
		if (strbuf_addstr(out, v) < 0)
			return -ENOMEM;
		p += n + 2;
	}
	return 0;
}

/* @s with every ',' doubled, as QEMU option values need. */
static int add_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		if ((*s == ',' && strbuf_addch(sb, ',') < 0) || strbuf_addch(sb, *s) < 0)
			return -ENOMEM;
	return 0;
}

/* binary, display, monitor, and labd's serial line first. */
static int fixed_args(const struct qemu_cmdline_in *in, char ***argv)
{
	struct strbuf chardev = STRBUF_INIT;
	int r;

	r = strbuf_addf(&chardev, "socket,id=%s,fd=%d", QEMU_CMDLINE_CHARDEV, in->serial_fd);
	if (!r && in->serial_log)
		r = strbuf_addstr(&chardev, ",logfile=");
	if (!r && in->serial_log)
		r = add_escaped(&chardev, in->serial_log);
	if (r || strv_push(argv, in->dev->type->qemu.binary) < 0 ||
	    strv_push(argv, "-display") < 0 || strv_push(argv, "none") < 0 ||
	    strv_push(argv, "-monitor") < 0 || strv_push(argv, "none") < 0 ||
	    strv_push(argv, "-chardev") < 0 || strv_push(argv, chardev.buf) < 0 ||
	    strv_push(argv, "-serial") < 0 ||
	    strv_push(argv, "chardev:" QEMU_CMDLINE_CHARDEV) < 0)
		r = -ENOMEM;
	strbuf_release(&chardev);
	return r;
}

/* The job's own arguments, one per line of QEMU_CMDLINE_JOB_ARGS, after the type's. */
static int job_args(const struct qemu_cmdline_in *in, char ***argv)
{
	const char *v = in->job_vars ? kv_get(in->job_vars, QEMU_CMDLINE_JOB_ARGS) : NULL;
	const char *nl;
	char *arg;

	if (!v || !*v)
		return 0;
	for (;; v = nl + 1) {
		nl = strchrnul(v, '\n');
		arg = strndup(v, (size_t)(nl - v));
		if (!arg || strv_consume(argv, arg) < 0)
			return -ENOMEM;
		if (!*nl)
			return 0;
	}
}

int qemu_cmdline_build(const struct qemu_cmdline_in *in, char ***ret, char *err, size_t errlen)
{
	const struct device_type *t = in->dev->type;
	struct qemu_subst s = { .in = in };
	struct strbuf arg = STRBUF_INIT;
	char **argv = NULL;
	int r;

	if (!t || !t->has_qemu || !t->qemu.binary) {
		snprintf(err, errlen, "device type '%s' has no 'qemu' group with a 'binary'",
			 t ? t->name : "?");
		return -EINVAL;
	}
	if (t->qemu.console && strcmp(t->qemu.console, "socket")) {
		snprintf(err, errlen, "device type '%s': qemu console '%s' is not supported: labd connects QEMU's serial port to a socket it owns (console = \"socket\")",
			 t->name, t->qemu.console);
		return -EINVAL;
	}
	r = fixed_args(in, &argv);
	STRV_FOREACH(a, t->qemu.args) {
		if (r < 0)
			break;
		strbuf_reset(&arg);
		r = subst_arg(&s, *a, &arg, err, errlen);
		if (!r && strv_push(&argv, arg.buf) < 0)
			r = -ENOMEM;
	}
	strbuf_release(&arg);
	free(s.own);
	if (r >= 0)
		r = job_args(in, &argv);
	if (r < 0) {
		strv_free(argv);
		return r;
	}
	*ret = argv;
	return 0;
}
