// SPDX-License-Identifier: GPL-2.0-or-later
/* labctl_lab.c -- labctl whoami and labctl reload: who labd takes you for, the lab's configuration */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "labctl.h"

/* Only -h: @argv takes no argument. */
static int no_arguments(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return lc_help(argv[0]);
		return lc_usage_error(argv[0], "invalid option '%s'", argv[optind - 1]);
	}
	if (optind != argc)
		return lc_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* labctl whoami: the identity and role labd gives this token (or this Unix user). */
int cmd_whoami(struct labctl *lc, int argc, char **argv)
{
	json_t *doc = NULL;
	int ret = no_arguments(argc, argv);

	if (ret || (ret = lc_json(lc, "GET", "/whoami", NULL, &doc)))
		return ret;
	printf("%s (%s)\n", lc_str(doc, "name", "?"), lc_str(doc, "role", "?"));
	json_decref(doc);
	return LABCTL_OK;
}

static void print_names(const char *what, const json_t *names)
{
	const json_t *n;
	size_t i;

	if (!json_array_size(names))
		return;
	printf("%s:", what);
	json_array_foreach(names, i, n)
		printf(" %s", json_string_value(n));
	printf("\n");
}

/*
 * labctl reload: labd reads labd.conf and its board directory again (as
 * SIGHUP does) and says what changed; refused, the reasons and exit 1.
 */
int cmd_reload(struct labctl *lc, int argc, char **argv)
{
	json_t *doc = NULL;
	int ret = no_arguments(argc, argv);

	if (ret || (ret = lc_json(lc, "POST", "/reload", NULL, &doc)))
		return ret;
	printf("reloaded: %lld boards, %lld device types\n", lc_int(doc, "boards"),
	       lc_int(doc, "device_types"));
	print_names("added", json_object_get(doc, "added"));
	print_names("changed", json_object_get(doc, "changed"));
	print_names("removed (after their jobs)", json_object_get(doc, "removed"));
	json_decref(doc);
	return LABCTL_OK;
}
