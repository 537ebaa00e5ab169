// SPDX-License-Identifier: GPL-2.0-or-later
/* test_prepare.c -- the overlay's delivery and the secrets, as commands to type */
#include "run/actions/test_prepare.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "core/kv.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "job/job.h"
#include "job/testdef.h"

/* The last command: the marker when the overlay's bin directory is there. */
static int check_command(int64_t job_id, char ***cmds)
{
	char *cmd;

	if (asprintf(&cmd, "[ -d /" OVERLAY_BASE_FMT "/bin ] && echo labd-overlay-ok-$((6*7))",
		     (long long)job_id) < 0)
		return -ENOMEM;
	return strv_consume(cmds, cmd);
}

/* LAVA's: "<download_command> URL && <unpack_command> FILE", FILE the URL's last part. */
static int transfer_commands(const struct test_overlay_how *how, char ***cmds)
{
	const char *file = strrchr(how->url, '/') + 1;
	struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_addf(&sb, "rm -f %s; %s %s && %s %s", file, how->boot->download_command, how->url,
		    how->boot->unpack_command, file);
	r = strv_push(cmds, sb.buf);
	strbuf_release(&sb);
	return r;
}

/* The whole file @path in base64, as lines of TEST_BASE64_LINE characters (strv). */
static int base64_lines(const char *path, char ***lines, char *err, size_t errlen)
{
	unsigned char in[TEST_BASE64_LINE / 4 * 3], out[TEST_BASE64_LINE + 1];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot read the overlay '%s': %s", path, strerror(errno));
		r = -errno;
		goto out;
	}
	if (st.st_size > OVERLAY_TYPED_MAX) {
		snprintf(err, errlen, "the overlay is %lld bytes, more than the %d typed on a console: give the boot a transfer_overlay or deploy a ramdisk",
			 (long long)st.st_size, OVERLAY_TYPED_MAX);
		r = -EFBIG;
		goto out;
	}
	while (!r && (n = read(fd, in, sizeof(in))) > 0) {
		EVP_EncodeBlock(out, in, (int)n);
		r = strv_push(lines, (char *)out);
	}
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/* printf lines into /lava-<id>.b64, decoded and unpacked at the root. */
static int typed_commands(const struct test_overlay_how *how, char ***cmds, char *err,
			  size_t errlen)
{
	char **lines = NULL, **write = NULL, file[64], *cmd;
	int r = base64_lines(how->path, &lines, err, errlen);

	snprintf(file, sizeof(file), "/" OVERLAY_BASE_FMT ".b64", (long long)how->job_id);
	if (!r)
		r = testdef_file_commands(file, (const char *const *)lines, &write);
	STRV_FOREACH(c, write)
		r = r ?: strv_push(cmds, *c);
	if (!r && asprintf(&cmd, "base64 -d %s | tar -C / -xzf -; rm -f %s", file, file) < 0)
		r = -ENOMEM;
	if (!r)
		r = strv_consume(cmds, cmd);
	strv_free(lines);
	strv_free(write);
	return r;
}

int test_overlay_commands(const struct test_overlay_how *how, char ***ret, char *err,
			  size_t errlen)
{
	char **cmds = NULL;
	int r = 0;

	snprintf(err, errlen, "out of memory");
	if (how->delivery == OVERLAY_DELIVERY_TRANSFER)
		r = transfer_commands(how, &cmds);
	else if (how->delivery == OVERLAY_DELIVERY_TYPED)
		r = typed_commands(how, &cmds, err, errlen);
	if (!r)
		r = check_command(how->job_id, &cmds);
	if (r < 0) {
		strv_free(cmds);
		return r;
	}
	*ret = cmds;
	return 0;
}

/*
 * Typed without echo: the shell's echo of a long line wraps at the
 * terminal's width, and a secret cut by the wrap could not be masked.
 */
int test_secrets_commands(const struct kv *secrets, char ***ret)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r = 0;

	if (!secrets->n)
		return 0;
	r = strv_push(ret, "stty -echo");
	for (i = 0; !r && i < secrets->n; i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "export %s=", secrets->keys[i]);
		testdef_quote(&sb, secrets->vals[i], strlen(secrets->vals[i]));
		r = strv_push(ret, sb.buf);
	}
	r = r ?: strv_push(ret, "stty echo");
	strbuf_release(&sb);
	return r;
}
