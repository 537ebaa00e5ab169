// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api-routes.c -- doc/api.md's list of routes, from the API's route table
 *
 *   api-routes                 print the list (markdown, between its markers)
 *   api-routes --check DOC     exit 1 when DOC's list differs from the table, or
 *                              a "### METHOD /path" section names no route
 *   api-routes --write DOC     replace DOC's list (`make api-doc`)
 *
 * The list is generated, never edited by hand, so that the reference cannot
 * drift from what labd answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "core/strbuf.h"

#define BEGIN "<!-- routes: generated from the route table by `make api-doc`; do not edit -->"
#define END "<!-- end of routes -->"

/* "/jobs/ * /log" as the reference writes it: "/jobs/{id}/log", "/devices/{name}". */
static void add_path(struct strbuf *sb, const char *path)
{
	const char *p = path, *prev = "";

	while (*p) {
		size_t len = strcspn(p + 1, "/");

		if (len == 1 && p[1] == '*')
			strbuf_addstr(sb, strncmp(prev, "/devices", 8) ? "/{id}" : "/{name}");
		else
			strbuf_add(sb, p, len + 1);
		prev = p;
		p += len + 1;
	}
}

static void make_list(struct strbuf *sb)
{
	const struct api_route *rt;
	const char *query;
	size_t i;

	strbuf_addstr(sb, BEGIN "\n| method | path | role | query parameters |\n|---|---|---|---|\n");
	for (i = 0; (rt = api_route_at(i, &query)); i++) {
		strbuf_addf(sb, "| %s | `" API_PREFIX, rt->method);
		add_path(sb, rt->path);
		strbuf_addf(sb, "` | %s | %s |\n", user_role_name(rt->role), query);
	}
	strbuf_addstr(sb, END "\n");
}

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb, NULL);
}

/* Whether the "### METHOD /path" section heading at @h names a route. */
static bool names_route(const char *h)
{
	struct strbuf path = STRBUF_INIT;
	const struct api_route *rt;
	const char *query;
	size_t i, mlen;
	bool found = false;

	for (i = 0; !found && (rt = api_route_at(i, &query)); i++) {
		mlen = strlen(rt->method);
		strbuf_reset(&path);
		add_path(&path, rt->path);
		found = !strncmp(h, rt->method, mlen) && h[mlen] == ' ' &&
			!strncmp(h + mlen + 1, path.buf, path.len) &&
			strchr(" \n", h[mlen + 1 + path.len]);
	}
	strbuf_release(&path);
	return found;
}

int main(int argc, char **argv)
{
	struct strbuf list = STRBUF_INIT;
	char *doc, *begin, *end, *h;
	int bad = 0;
	FILE *f;

	make_list(&list);
	if (argc != 3) {
		fputs(list.buf, stdout);
		return 0;
	}
	doc = slurp(argv[2]);
	begin = strstr(doc, BEGIN);
	end = begin ? strstr(begin, END "\n") : NULL;
	if (!end) {
		fprintf(stderr, "%s: no list of routes between '%s' and '%s'\n", argv[2], BEGIN, END);
		return 1;
	}
	if (!strcmp(argv[1], "--write")) {
		f = fopen(argv[2], "w");
		if (!f || fprintf(f, "%.*s%s%s", (int)(begin - doc), doc, list.buf,
				  end + strlen(END "\n")) < 0 || fclose(f)) {
			perror(argv[2]);
			return 1;
		}
		return 0;
	}
	if ((size_t)(end + strlen(END "\n") - begin) != list.len ||
	    memcmp(begin, list.buf, list.len)) {
		fprintf(stderr, "%s: the list of routes differs from the route table "
			"(make api-doc); it should be:\n%s", argv[2], list.buf);
		bad = 1;
	}
	for (h = strstr(doc, "\n### "); h; h = strstr(h + 1, "\n### ")) {
		if (!strncmp(h + 5, "GET ", 4) || !strncmp(h + 5, "POST ", 5)) {
			if (!names_route(h + 5)) {
				fprintf(stderr, "%s: '%.*s' names no route\n", argv[2],
					(int)strcspn(h + 1, "\n"), h + 1);
				bad = 1;
			}
		}
	}
	free(doc);
	strbuf_release(&list);
	return bad;
}
