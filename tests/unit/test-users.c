// SPDX-License-Identifier: GPL-2.0-or-later
/* test-users.c -- dispatcher/session/users.c: token hashes, roles, lookups, and what load refuses */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libconfig.h>
#include <openssl/sha.h>

#include "config/config.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "session/users.h"
#include "tap.h"

#define KNOWN "(known: reader, ci, developer, admin)"

static char conf_path[] = "/tmp/labd-test-users.XXXXXX";

/* "sha256:<hex>" of @token, as labctl token-hash prints it. */
static const char *hash_of(const char *token)
{
	static char buf[8][80];
	static int next;
	unsigned char h[SHA256_DIGEST_LENGTH];
	char *out = buf[next++ % 8];
	size_t i;

	SHA256((const unsigned char *)token, strlen(token), h);
	strcpy(out, USERS_HASH_PREFIX);
	for (i = 0; i < sizeof(h); i++)
		sprintf(out + strlen(USERS_HASH_PREFIX) + 2 * i, "%02x", h[i]);
	return out;
}

/*
 * users_load() on @text, written to a file so messages say "FILE:LINE:"
 * (conf_path).  Returns what users_load() returns.
 */
static int load(const char *text, struct users **ret, struct diag *diag)
{
	struct lab_config c = { 0 };
	config_t cf;
	FILE *f;
	int fd, r;

	strcpy(conf_path, "/tmp/labd-test-users.XXXXXX");
	fd = mkstemp(conf_path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f)
		return -EIO;
	fputs(text, f);
	fclose(f);
	config_init(&cf);
	r = config_read_file(&cf, conf_path) == CONFIG_TRUE ? 0 : -EIO;
	if (!r) {
		c.root = config_root_setting(&cf);
		r = users_load(&c, ret, diag);
	}
	config_destroy(&cf);
	unlink(conf_path);
	return r;
}

/* Whether @diag holds "<conf_path>:@line: @cause" exactly. */
static bool has_msg(const struct diag *diag, int line, const char *cause)
{
	char want[1024];
	size_t i;

	snprintf(want, sizeof(want), "%s:%d: %s", conf_path, line, cause);
	for (i = 0; i < diag->n; i++)
		if (!strcmp(diag->msgs[i], want))
			return true;
	printf("#   no message '%s' among:\n", want);
	for (i = 0; i < diag->n; i++)
		printf("#     %s\n", diag->msgs[i]);
	return false;
}

TEST(test_users__parse_hash)
{
	unsigned char h[USERS_HASH_LEN], keep[USERS_HASH_LEN];
	char text[80];
	size_t i;

	CHECK(users_parse_hash(hash_of("alice"), h) == 0);
	SHA256((const unsigned char *)"alice", 5, keep);
	CHECK(!memcmp(h, keep, sizeof(h)));
	/* upper-case hex is the same hash */
	strcpy(text, hash_of("alice"));
	for (i = strlen(USERS_HASH_PREFIX); text[i]; i++)
		if (text[i] >= 'a' && text[i] <= 'f')
			text[i] = (char)(text[i] - 'a' + 'A');
	CHECK(users_parse_hash(text, h) == 0);
	CHECK(!memcmp(h, keep, sizeof(h)));
	/* refusals leave the result alone */
	memset(h, 0x5a, sizeof(h));
	memcpy(keep, h, sizeof(h));
	CHECK_INT(users_parse_hash("", h), ==, -EINVAL);
	CHECK_INT(users_parse_hash("sha256:", h), ==, -EINVAL);
	CHECK_INT(users_parse_hash("alice-secret-token", h), ==, -EINVAL);
	strcpy(text, hash_of("x"));
	CHECK_INT(users_parse_hash(text + strlen(USERS_HASH_PREFIX), h), ==, -EINVAL);
	memcpy(text, "sha512:", 7);
	CHECK_INT(users_parse_hash(text, h), ==, -EINVAL);
	strcpy(text, hash_of("x"));
	text[strlen(text) - 1] = '\0';				/* 63 digits */
	CHECK_INT(users_parse_hash(text, h), ==, -EINVAL);
	strcpy(text, hash_of("x"));
	strcat(text, "0");					/* 65 digits */
	CHECK_INT(users_parse_hash(text, h), ==, -EINVAL);
	strcpy(text, hash_of("x"));
	text[20] = 'g';						/* not hex, late */
	CHECK_INT(users_parse_hash(text, h), ==, -EINVAL);
	CHECK(!memcmp(h, keep, sizeof(h)));
}

TEST(test_users__roles)
{
	static const char *const names[] = { "reader", "ci", "developer", "admin" };
	enum user_role role;
	size_t i;

	for (i = 0; i < 4; i++) {
		CHECK(user_role_from_name(names[i], &role) == 0);
		CHECK_INT(role, ==, USER_ROLE_READER + (int)i);
		CHECK_STR(user_role_name(role), names[i]);
	}
	/* each role allows what the weaker ones do: the API compares them */
	CHECK(USER_ROLE_NONE < USER_ROLE_READER && USER_ROLE_READER < USER_ROLE_CI &&
	      USER_ROLE_CI < USER_ROLE_DEVELOPER && USER_ROLE_DEVELOPER < USER_ROLE_ADMIN);
	role = USER_ROLE_CI;
	CHECK_INT(user_role_from_name("none", &role), ==, -EINVAL);
	CHECK_INT(user_role_from_name("Admin", &role), ==, -EINVAL);
	CHECK_INT(user_role_from_name("root", &role), ==, -EINVAL);
	CHECK_INT(user_role_from_name("", &role), ==, -EINVAL);
	CHECK_INT(role, ==, USER_ROLE_CI);
	CHECK_STR(user_role_name(USER_ROLE_NONE), "none");
	CHECK_STR(user_role_name((enum user_role)42), "none");
}

TEST(test_users__lookups)
{
	struct diag diag = DIAG_INIT;
	struct users *u = NULL;
	const struct user *a;
	struct strbuf text = STRBUF_INIT;

	strbuf_addf(&text, "users = (\n"
		    "  { name = \"alice\"; role = \"developer\"; tokens = [ \"%s\", \"%s\" ];"
		    " uids = [ 1000, 1001 ]; },\n"
		    "  { name = \"gitlab\"; role = \"ci\"; tokens = [ \"%s\" ]; },\n"
		    "  { name = \"root@lab\"; role = \"admin\"; uids = 0; }\n"
		    ");\n", hash_of("a1"), hash_of("a2"), hash_of("g1"));
	CHECK_INT(load(text.buf, &u, &diag), ==, 0);
	strbuf_release(&text);
	CHECK_INT(users_count(u), ==, 3);
	a = users_find_token(u, "a1");
	CHECK(a && !strcmp(a->name, "alice") && a->role == USER_ROLE_DEVELOPER);
	CHECK_INT(a->n_hashes, ==, 2);
	CHECK(users_find_token(u, "a2") == a);
	CHECK_STR(users_find_token(u, "g1")->name, "gitlab");
	CHECK(!users_find_token(u, "a3"));
	CHECK(!users_find_token(u, ""));
	CHECK(!users_find_token(u, NULL));
	CHECK(!users_find_token(u, hash_of("a1")));	/* the hash is not the token */
	CHECK(users_find_uid(u, 1000) == a && users_find_uid(u, 1001) == a);
	CHECK_STR(users_find_uid(u, 0)->name, "root@lab");
	CHECK_INT(users_find_uid(u, 0)->role, ==, USER_ROLE_ADMIN);
	CHECK(!users_find_uid(u, 1002));
	CHECK(!users_find_uid(u, (uid_t)-1));
	CHECK(users_find_name(u, "alice") == a);
	CHECK(!users_find_name(u, "Alice"));
	CHECK(!users_find_name(u, NULL));
	CHECK(users_free(u) == NULL);
	/* no list, or nothing loaded: nobody */
	u = NULL;
	CHECK_INT(load("lab_name = \"x\";\n", &u, &diag), ==, 0);
	CHECK_INT(users_count(u), ==, 0);
	CHECK(!users_find_token(u, "a1") && !users_find_uid(u, 0));
	users_free(u);
	CHECK_INT(users_count(NULL), ==, 0);
	CHECK(!users_find_token(NULL, "a1") && !users_find_uid(NULL, 0));
	CHECK(!users_find_name(NULL, "alice"));
	CHECK(users_free(NULL) == NULL);
	CHECK_INT(diag.n, ==, 0);
}

/* Every problem of the list, each with its line; nothing is kept. */
TEST(test_users__refusals)
{
	struct diag diag = DIAG_INIT;
	struct users *u = (struct users *)&diag;	/* untouched on failure */
	struct strbuf text = STRBUF_INIT;
	const char *h = hash_of("shared");

	strbuf_addf(&text, "users = (\n"
		    "  { name = \"alice\"; role = \"developer\"; tokens = [ \"%s\" ]; uids = [ 7 ]; },\n"
		    "  { name = \"bob\"; role = \"wizard\"; },\n"
		    "  { name = \"carol\"; role = \"ci\"; tokens = [ \"plain\" ]; },\n"
		    "  { name = \"alice\"; role = \"root\"; },\n"
		    "  { name = \"dave\"; role = \"ci\"; tokens = [ \"%s\" ]; },\n"
		    "  { name = \"erin\"; role = \"reader\"; uids = ( 7, -1, \"x\" ); },\n"
		    "  { name = \"no space\"; role = \"reader\"; },\n"
		    "  { role = \"reader\"; colour = \"red\"; },\n"
		    "  \"frank\" );\n", h, h);	/* libconfig: the line after a scalar */
	CHECK_INT(load(text.buf, &u, &diag), ==, -EINVAL);
	strbuf_release(&text);
	CHECK(u == (struct users *)&diag);
	CHECK(has_msg(&diag, 3, "unknown role 'wizard' of user 'bob' " KNOWN));
	CHECK(has_msg(&diag, 4, "tokens of user 'carol' must be hashed: 'sha256:' and 64 hex digits"
			 " (labctl token-hash TOKEN)"));
	CHECK(has_msg(&diag, 5, "unknown role 'root' of user 'alice' " KNOWN));
	CHECK(has_msg(&diag, 5, "duplicate user 'alice'"));
	CHECK(has_msg(&diag, 6, "users 'alice' and 'dave' share a token"));
	CHECK(has_msg(&diag, 7, "invalid uid -1 of user 'erin'"));
	CHECK(has_msg(&diag, 7, "uids of user 'erin' must be integers, not string"));
	CHECK(has_msg(&diag, 7, "users 'alice' and 'erin' share uid 7"));
	CHECK(has_msg(&diag, 8, "invalid user name 'no space': up to 32 letters, digits, '.', '_',"
			 " '-' and '@'"));
	CHECK(has_msg(&diag, 9, "unknown key 'colour'"));
	CHECK(has_msg(&diag, 9, "missing key 'name'"));
	CHECK(has_msg(&diag, 10, "a user must be a group, not string"));
	CHECK_INT(diag.n, ==, 12);
	diag_release(&diag);
	/* the list itself */
	CHECK_INT(load("users = { name = \"x\"; };\n", &u, &diag), ==, -EINVAL);
	CHECK(has_msg(&diag, 1, "'users' must be a list of groups, not group"));
	diag_release(&diag);
}

TEST_LIST(test_users__parse_hash, test_users__roles, test_users__lookups, test_users__refusals);
