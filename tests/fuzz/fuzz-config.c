// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-config.c -- labd.conf and board files: the first byte chooses which
 * one the rest is (labd.conf with an empty board directory, or a board file
 * next to the simulated types); a configuration refused says why.  What
 * follows a form feed is written as inc.conf next to labd.conf (empty without
 * one), for an @include to reach a second file: `@include "inc.conf"` from
 * labd.conf, `@include "../inc.conf"` from a board file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "core/diag.h"
#include "fuzz.h"

static char dir[64], main_conf[128], plain_conf[128], board[128], inc_conf[128];

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	FUZZ_ASSERT(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char conf[] = "lab_name = \"fuzz\";\nstate_dir = \"state\";\n"
				   "devices_dir = \"devices\";\n";
	const char *top = getenv("LABD_TOP");
	char path[512], *types = NULL;
	size_t len = 0;
	FILE *f;

	strcpy(dir, "/tmp/fuzz-config.XXXXXX");
	FUZZ_ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/devices", dir);
	FUZZ_ASSERT(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/empty", dir);
	FUZZ_ASSERT(mkdir(path, 0700) == 0);
	snprintf(main_conf, sizeof(main_conf), "%s/labd.conf", dir);
	snprintf(plain_conf, sizeof(plain_conf), "%s/plain.conf", dir);
	snprintf(board, sizeof(board), "%s/devices/10-board.conf", dir);
	snprintf(inc_conf, sizeof(inc_conf), "%s/inc.conf", dir);
	write_file(main_conf, conf, sizeof(conf) - 1);
	/* the simulated types, so that board files have types to use */
	snprintf(path, sizeof(path), "%s/devices/sim.conf", top ? top : ".");
	f = fopen(path, "r");
	if (f) {
		FUZZ_ASSERT(getdelim(&types, &len, '\0', f) >= 0);
		fclose(f);
		snprintf(path, sizeof(path), "%s/devices/00-types.conf", dir);
		write_file(path, types, strlen(types));
		free(types);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag diag = DIAG_INIT;
	bool as_board = size && (data[0] & 1);
	const uint8_t *ff;
	int r;

	if (size)
		data++, size--;
	ff = size ? memchr(data, '\f', size) : NULL;
	write_file(inc_conf, ff ? ff + 1 : data, ff ? size - (size_t)(ff + 1 - data) : 0);
	if (ff)
		size = (size_t)(ff - data);
	if (as_board) {
		write_file(board, data, size);
		r = config_check(main_conf, &diag);
	} else {
		char head[160];
		size_t n = (size_t)snprintf(head, sizeof(head), "devices_dir = \"%s/empty\";\n", dir);
		char *text = malloc(n + size);

		if (!text)
			return 0;
		memcpy(text, head, n);
		memcpy(text + n, data, size);
		write_file(plain_conf, text, n + size);
		free(text);
		r = config_check(plain_conf, &diag);
	}
	FUZZ_ASSERT(r == 0 || r == -ENOMEM || diag.n > 0);
	diag_release(&diag);
	return 0;
}
