// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-rootfs.c -- dispatcher/rootfs/: archives made here with libarchive
 * unpacked into trees by the real helper (this program answers
 * `rootfs-helper`, as labd does), from files and streamed from file://
 * downloads; hostile archives; the export directory's limits and cleanup
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include "core/http_client.h"
#include "core/loop.h"
#include "rootfs/rootfs.h"
#include "rootfs/rootfs_internal.h"
#include "tap.h"

/*
 * This program is its own helper: `test-rootfs rootfs-helper unpack ...`.
 * As labd, it ignores SIGPIPE: a helper that stopped reading is an EPIPE.
 */
__attribute__((constructor)) static void helper_entry(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], ROOTFS_HELPER_COMMAND))
		exit(rootfs_helper_main(argc - 1, argv + 1));
	signal(SIGPIPE, SIG_IGN);
}

static char tmp[256];		/* scratch directory of the case */
static char exports[300];	/* the export directory in it */

/* A capability set as the kernel stores it: VFS_CAP_REVISION_2, cap_net_raw+ep. */
static const unsigned char cap_net_raw[20] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00,
					       0x00, 0x20, 0x00, 0x00 };

struct outcome {
	bool done;
	struct rootfs_unpack_result res;
	char msg[ROOTFS_MSG_MAX];
	char sha256[65];
	bool downloaded;
};

static void on_unpacked(const struct rootfs_unpack_result *res, void *ud)
{
	struct outcome *o = ud;

	o->done = true;
	o->res = *res;
	snprintf(o->msg, sizeof(o->msg), "%s", res->msg ? res->msg : "");
	snprintf(o->sha256, sizeof(o->sha256), "%s", res->sha256 ? res->sha256 : "");
	o->res.msg = o->msg;
}

static void on_downloaded(uint64_t bytes, void *ud)
{
	((struct outcome *)ud)->downloaded = true;
}

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "%s/labd-rootfs.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		abort();
	snprintf(exports, sizeof(exports), "%s/exports", tmp);
	mkdir(exports, 0755);
}

static void cleanup(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# cannot remove %s\n", tmp);
}

/* ---- archives ---- */

struct entry {
	const char *name;
	mode_t type;		/* AE_IFREG ... */
	mode_t perm;
	const char *data;	/* file contents, link target, hard link target */
	int uid, gid;
	dev_t rdev;
	bool cap;		/* security.capability: cap_net_raw+ep */
	size_t size;		/* a file of this many bytes instead of data */
};

/* A pax tar, compressed with @filter ("xz", "gzip" or NULL), of @entries at @path. */
static int write_archive(const char *path, const char *filter, const struct entry *entries)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	static char filler[65536];
	int r;

	for (size_t i = 0; i < sizeof(filler); i++)
		filler[i] = (char)(i * 31 + 7);	/* not zeros: those would become holes */
	archive_write_set_format_pax_restricted(a);
	if (filter && !strcmp(filter, "xz"))
		archive_write_add_filter_xz(a);
	else if (filter)
		archive_write_add_filter_gzip(a);
	r = archive_write_open_filename(a, path);
	for (const struct entry *x = entries; !r && x->name; x++) {
		archive_entry_clear(e);
		archive_entry_set_pathname(e, x->name);
		archive_entry_set_filetype(e, x->type == AE_IFLNK + 1 ? AE_IFREG : x->type);
		archive_entry_set_perm(e, x->perm ? x->perm : 0644);
		archive_entry_set_uid(e, x->uid);
		archive_entry_set_gid(e, x->gid);
		archive_entry_set_mtime(e, 1700000000, 0);
		if (x->type == AE_IFLNK)
			archive_entry_set_symlink(e, x->data);
		if (x->type == AE_IFLNK + 1)	/* a hard link */
			archive_entry_set_hardlink(e, x->data);
		if (x->type == AE_IFCHR || x->type == AE_IFBLK)
			archive_entry_set_rdev(e, x->rdev);
		if (x->cap)
			archive_entry_xattr_add_entry(e, "security.capability", cap_net_raw,
						      sizeof(cap_net_raw));
		if (x->type == AE_IFREG)
			archive_entry_set_size(e, x->size ? (la_int64_t)x->size :
					       x->data ? (la_int64_t)strlen(x->data) : 0);
		r = archive_write_header(a, e);
		if (!r && x->type == AE_IFREG && x->data && !x->size)
			archive_write_data(a, x->data, strlen(x->data));
		for (size_t left = x->size; !r && left;) {
			size_t n = left < sizeof(filler) ? left : sizeof(filler);

			archive_write_data(a, filler, n);
			left -= n;
		}
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		r = -1;
	archive_entry_free(e);
	archive_write_free(a);
	return r;
}

#define HARDLINK (AE_IFLNK + 1)
/* entries: a directory, a file, a symbolic link, a hard link, the end */
#define DIR_(n, p) { .name = (n), .type = AE_IFDIR, .perm = (p) }
#define FILE_(n, p, d) { .name = (n), .type = AE_IFREG, .perm = (p), .data = (d) }
#define LINK_(n, to) { .name = (n), .type = AE_IFLNK, .perm = 0777, .data = (to) }
#define HARD_(n, to) { .name = (n), .type = HARDLINK, .data = (to) }
#define END_ { .name = NULL }

static char *path_in(char *buf, size_t size, const char *a, const char *b)
{
	snprintf(buf, size, "%s/%s", a, b);
	return buf;
}

/* ---- running unpacks ---- */

struct bed {
	struct loop *loop;
	struct http_client *http;
	struct rootfs *fs;
	struct rootfs_params p;
};

static int bed_open(struct bed *b, uint64_t max_size, bool fail_when_full)
{
	struct rootfs_deps deps = { .helper = "/proc/self/exe" };
	int err;

	memset(b, 0, sizeof(*b));
	b->p.export_dir = exports;
	b->p.export_path = "/nfs";
	b->p.max_size = max_size;
	b->p.fail_when_full = fail_when_full;
	err = loop_new(&b->loop);
	if (!err)
		err = http_client_new(b->loop, &b->http);
	deps.loop = b->loop;
	if (!err)
		err = rootfs_new(&deps, &b->p, &b->fs);
	return err;
}

static void bed_close(struct bed *b)
{
	rootfs_free(b->fs);
	http_client_free(b->http);
	loop_free(b->loop);
}

static void run_until(struct loop *l, const bool *done)
{
	for (int i = 0; i < 3000 && !*done; i++)
		loop_run_once(l, 10 * USEC_PER_MSEC);
}

/* Wait until no tree is being removed. */
static void run_removals(struct bed *b)
{
	size_t removing = 1;

	for (int i = 0; i < 3000 && removing; i++) {
		rootfs_tree_count(b->fs, &removing);
		if (removing)
			loop_run_once(b->loop, 10 * USEC_PER_MSEC);
	}
}

/* Unpack the file @archive (file://@archive when @stream) into @t; the outcome in @o. */
static int unpack(struct bed *b, struct rootfs_tree *t, const char *archive, bool stream,
		  const char *into, const char *prefix, const char *sha256, struct outcome *o)
{
	char url[600];
	struct rootfs_unpack *u;
	struct rootfs_unpack_req req = { .tree = t, .http = b->http, .what = "the root",
					 .into = into, .prefix = prefix, .sha256sum = sha256,
					 .downloaded = on_downloaded };
	int err;

	memset(o, 0, sizeof(*o));
	snprintf(url, sizeof(url), "file://%s", archive);
	if (stream)
		req.url = url;
	else
		req.file = archive;
	err = rootfs_unpack_start(b->fs, &req, on_unpacked, o, &u);
	if (!err)
		run_until(b->loop, &o->done);
	return err;
}

static struct rootfs_tree *new_tree(struct bed *b)
{
	struct rootfs_tree *t = NULL;
	struct rootfs_request *rq;
	char err[256];

	rootfs_tree_request(b->fs, 42, 0, NULL, NULL, &t, &rq, err, sizeof(err));
	return t;
}

/* ---- cases ---- */

static const struct entry root_entries[] = {
	DIR_("./", 0755),
	DIR_("etc/", 0755),
	FILE_("etc/hostname", 0644, "board\n"),
	{ .name = "home/user/", .type = AE_IFDIR, .perm = 0700, .uid = 1000, .gid = 1000 },
	{ .name = "home/user/notes", .type = AE_IFREG, .perm = 0600, .data = "hi\n", .uid = 1000,
	  .gid = 1000 },
	DIR_("usr/bin/", 0755),
	{ .name = "usr/bin/ping", .type = AE_IFREG, .perm = 04755, .data = "ping binary", .cap = true },
	HARD_("usr/bin/ping6", "usr/bin/ping"),
	DIR_("usr/lib/", 0755),
	LINK_("lib", "usr/lib"),
	DIR_("dev/", 0755),
	{ .name = "dev/null", .type = AE_IFCHR, .perm = 0666, .rdev = 0x103 },
	{ .name = "run/initctl", .type = AE_IFIFO, .perm = 0600 },
	{ .name = "var/big", .type = AE_IFREG, .perm = 0644, .size = 3 << 20 },
	END_,
};

static bool file_is(const char *path, const char *text)
{
	char buf[256] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n >= 0 && !strcmp(buf, text);
}

/* A root file system: owners, modes, links, device nodes, capabilities, as in the archive. */
TEST(test_rootfs__unpack_keeps_metadata)
{
	char archive[400], p[600], link[64] = "";
	unsigned char cap[64];
	struct outcome o;
	struct stat st, st2;
	struct bed b;
	struct rootfs_tree *t;
	const char *dir;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar.xz"), "xz",
				root_entries), ==, 0);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	if (!rootfs_privileged(b.fs)) {
		bed_close(&b);
		cleanup();
		TEST_SKIP("owners and device nodes are kept only with root's rights");
	}
	t = new_tree(&b);
	CHECK(t);
	dir = rootfs_tree_dir(t);
	CHECK(!strncmp(dir, exports, strlen(exports)) && strstr(dir, "/42-"));
	CHECK(!strncmp(rootfs_tree_mount_path(t), "/nfs/42-", 8));
	CHECK_INT(unpack(&b, t, archive, false, NULL, NULL, NULL, &o), ==, 0);
	CHECK_STR(o.msg, "");
	CHECK_INT(o.res.err, ==, 0);
	CHECK_INT(o.res.bytes, ==, (3 << 20) + 6 + 3 + 11);
	CHECK_INT(rootfs_tree_bytes(t), ==, o.res.bytes);
	CHECK_INT(rootfs_used(b.fs), ==, o.res.bytes);
	CHECK(file_is(path_in(p, sizeof(p), dir, "etc/hostname"), "board\n"));
	CHECK_INT(stat(path_in(p, sizeof(p), dir, "home/user/notes"), &st), ==, 0);
	CHECK_INT(st.st_uid, ==, 1000);
	CHECK_INT(st.st_gid, ==, 1000);
	CHECK_INT(st.st_mode & 07777, ==, 0600);
	CHECK_INT(stat(path_in(p, sizeof(p), dir, "home/user"), &st), ==, 0);
	CHECK_INT(st.st_mode & 07777, ==, 0700);
	CHECK_INT(stat(path_in(p, sizeof(p), dir, "usr/bin/ping"), &st), ==, 0);
	CHECK_INT(st.st_mode & 07777, ==, 04755);
	CHECK_INT(st.st_nlink, ==, 2);
	CHECK_INT(getxattr(p, "security.capability", cap, sizeof(cap)), ==, sizeof(cap_net_raw));
	CHECK(!memcmp(cap, cap_net_raw, sizeof(cap_net_raw)));
	CHECK_INT(stat(path_in(p, sizeof(p), dir, "usr/bin/ping6"), &st2), ==, 0);
	CHECK_INT(st2.st_ino, ==, st.st_ino);
	CHECK_INT(readlink(path_in(p, sizeof(p), dir, "lib"), link, sizeof(link) - 1), ==, 7);
	CHECK_STR(link, "usr/lib");
	CHECK_INT(lstat(path_in(p, sizeof(p), dir, "dev/null"), &st), ==, 0);
	CHECK(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3);
	CHECK_INT(lstat(path_in(p, sizeof(p), dir, "run/initctl"), &st), ==, 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_INT(stat(dir, &st), ==, 0);
	CHECK_INT(st.st_mode & 07777, ==, 0755);
	rootfs_tree_release(t);
	run_removals(&b);
	CHECK_INT(access(dir, F_OK), ==, -1);
	CHECK_INT(rootfs_used(b.fs), ==, 0);
	bed_close(&b);
	cleanup();
}

/* Modules into a merged-/usr root: lib -> usr/lib stays a link, the modules land in usr/lib. */
TEST(test_rootfs__merged_usr_kept)
{
	static const struct entry modules[] = {
		DIR_("./", 0755),
		DIR_("./lib/", 0755),
		DIR_("./lib/modules/", 0755),
		FILE_("./lib/modules/6.1.0/kernel/fs/nfs/nfs.ko", 0644, "module"),
		END_,
	};
	char root[400], mods[400], p[600], link[64] = "";
	struct outcome o;
	struct stat st;
	struct bed b;
	struct rootfs_tree *t;

	setup();
	CHECK_INT(write_archive(path_in(root, sizeof(root), tmp, "root.tar.gz"), "gzip",
				root_entries), ==, 0);
	CHECK_INT(write_archive(path_in(mods, sizeof(mods), tmp, "modules.tar"), NULL, modules), ==, 0);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, root, true, NULL, NULL, NULL, &o), ==, 0);
	CHECK_STR(o.msg, "");
	CHECK_INT(unpack(&b, t, mods, false, "/", NULL, NULL, &o), ==, 0);
	CHECK_STR(o.msg, "");
	CHECK_INT(lstat(path_in(p, sizeof(p), rootfs_tree_dir(t), "lib"), &st), ==, 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_INT(readlink(p, link, sizeof(link) - 1), ==, 7);
	CHECK(file_is(path_in(p, sizeof(p), rootfs_tree_dir(t),
			      "usr/lib/modules/6.1.0/kernel/fs/nfs/nfs.ko"), "module"));
	rootfs_tree_release(t);
	run_removals(&b);
	bed_close(&b);
	cleanup();
}

/* prefix: only that directory of the archive; into: below that directory of the tree. */
TEST(test_rootfs__prefix_and_into)
{
	static const struct entry entries[] = {
		DIR_("rootfs/", 0755),
		FILE_("rootfs/etc/issue", 0644, "issue"),
		FILE_("rootfsX/nope", 0644, "no"),
		FILE_("README", 0644, "readme"),
		END_,
	};
	char archive[400], p[600];
	struct outcome o;
	struct bed b;
	struct rootfs_tree *t;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "a.tar"), NULL, entries), ==, 0);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, archive, false, "/opt/k", "./rootfs/", NULL, &o), ==, 0);
	CHECK_STR(o.msg, "");
	CHECK(file_is(path_in(p, sizeof(p), rootfs_tree_dir(t), "opt/k/etc/issue"), "issue"));
	CHECK_INT(access(path_in(p, sizeof(p), rootfs_tree_dir(t), "opt/k/README"), F_OK), ==, -1);
	CHECK_INT(access(path_in(p, sizeof(p), rootfs_tree_dir(t), "opt/kX"), F_OK), ==, -1);
	CHECK_INT(access(path_in(p, sizeof(p), rootfs_tree_dir(t), "README"), F_OK), ==, -1);
	CHECK_INT(unpack(&b, t, archive, false, NULL, "none", NULL, &o), ==, 0);
	CHECK_INT(o.res.err, !=, 0);
	CHECK_CONTAINS(o.msg, "the archive holds nothing below the prefix 'none'");
	rootfs_tree_release(t);
	run_removals(&b);
	bed_close(&b);
	cleanup();
}

/* The directory beside the export directory that hostile archives aim at. */
static bool outside_untouched(void)
{
	char p[400];
	struct stat st;

	return stat(path_in(p, sizeof(p), tmp, "outside/x"), &st) < 0 &&
	       stat(path_in(p, sizeof(p), tmp, "outside/y"), &st) < 0 &&
	       stat(path_in(p, sizeof(p), tmp, "outside/z"), &st) < 0 &&
	       stat(path_in(p, sizeof(p), tmp, "outside/dotdot"), &st) < 0 &&
	       stat(path_in(p, sizeof(p), tmp, "outside/abs"), &st) < 0;
}

/* Unpack @entries; it must fail as the archive's fault, saying @why, touching nothing outside. */
static int hostile(struct bed *b, const struct entry *entries, const char *why)
{
	char archive[400];
	struct outcome o;
	struct rootfs_tree *t = new_tree(b);
	int ok;

	if (!t || write_archive(path_in(archive, sizeof(archive), tmp, "h.tar"), NULL, entries))
		return 0;
	ok = !unpack(b, t, archive, false, NULL, NULL, NULL, &o) && o.res.err &&
	     o.res.blame == ROOTFS_BLAME_ARCHIVE && strstr(o.msg, why) && outside_untouched();
	if (!ok)
		printf("# %s: got '%s'\n", entries[entries[1].name ? 1 : 0].name, o.msg);
	rootfs_tree_release(t);
	return ok;
}

/* `..`, absolute paths, links out of the tree: refused, nothing written outside. */
TEST(test_rootfs__hostile_archives)
{
	char abs[400], evil[400], p[600];
	struct bed b;

	setup();
	snprintf(abs, sizeof(abs), "%s/outside/abs", tmp);
	snprintf(evil, sizeof(evil), "%s/outside", tmp);
	mkdir(evil, 0755);
	{
		const struct entry a[] = { FILE_("ok", 0644, "ok"), FILE_(abs, 0644, "x"), END_ };
		const struct entry d[] = { FILE_("ok", 0644, "ok"),
					   FILE_("../../outside/dotdot", 0644, "x"), END_ };
		const struct entry s1[] = { LINK_("evil", evil),
					    FILE_("evil/x", 0644, "x"), END_ };
		const struct entry s2[] = { LINK_("up", "../../outside"),
					    FILE_("up/y", 0644, "y"), END_ };
		const struct entry s3[] = { LINK_("up", "../../outside"),
					    DIR_("up/", 0755), END_ };
		const struct entry h1[] = { FILE_("ok", 0644, "ok"),
					    HARD_("h", "/etc/passwd"), END_ };
		const struct entry h2[] = { LINK_("up", "../../outside"),
					    HARD_("h", "up/z"), END_ };

		CHECK_INT(bed_open(&b, 0, false), ==, 0);
		CHECK(hostile(&b, a, "has an absolute path: refused"));
		CHECK(hostile(&b, d, "has a '..' in its path: refused"));
		CHECK(hostile(&b, s1, "'evil' goes through a symbolic link that leaves the tree: refused"));
		CHECK(hostile(&b, s2, "'up' goes through a symbolic link that leaves the tree: refused"));
		CHECK(hostile(&b, s3, "'up' goes through a symbolic link that leaves the tree: refused"));
		CHECK(hostile(&b, h1, "has an absolute path: refused"));
		CHECK(hostile(&b, h2, "goes through a symbolic link that leaves the tree: refused"));
	}
	run_removals(&b);
	CHECK_INT(rootfs_tree_count(b.fs, NULL), ==, 0);
	CHECK_INT(access(path_in(p, sizeof(p), tmp, "outside"), F_OK), ==, 0);
	bed_close(&b);
	cleanup();
}

/* Garbage and a cut archive: the archive's fault, with libarchive's reason. */
TEST(test_rootfs__corrupt_and_truncated)
{
	char archive[400], cut[400];
	unsigned char junk[10000];
	struct outcome o;
	struct bed b;
	struct stat st;
	struct rootfs_tree *t;
	FILE *f;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar.xz"), "xz",
				root_entries), ==, 0);
	CHECK_INT(stat(archive, &st), ==, 0);
	CHECK_INT(truncate(archive, st.st_size / 2), ==, 0);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7919 + 13);
	f = fopen(path_in(cut, sizeof(cut), tmp, "junk"), "w");
	CHECK(f);
	fwrite(junk, 1, sizeof(junk), f);
	fclose(f);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, archive, true, NULL, NULL, NULL, &o), ==, 0);
	CHECK_INT(o.res.err, !=, 0);
	CHECK_INT(o.res.blame, ==, ROOTFS_BLAME_ARCHIVE);
	CHECK_CONTAINS(o.msg, "cannot unpack the root 'file://");
	CHECK_CONTAINS(o.msg, "corrupt or truncated archive");
	CHECK_INT(unpack(&b, t, cut, false, NULL, NULL, NULL, &o), ==, 0);
	CHECK_INT(o.res.blame, ==, ROOTFS_BLAME_ARCHIVE);
	CHECK_CONTAINS(o.msg, "corrupt or truncated archive: Unrecognized archive format");
	rootfs_tree_release(t);
	run_removals(&b);
	bed_close(&b);
	cleanup();
}

static void sha256_of(const char *path, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned len = 0;
	FILE *f = fopen(path, "r");
	size_t n;

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		EVP_DigestUpdate(c, buf, n);
	if (f)
		fclose(f);
	EVP_DigestFinal_ex(c, md, &len);
	EVP_MD_CTX_free(c);
	for (unsigned i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

/* A download streamed into the helper: the checksum holds, or the unpack fails. */
TEST(test_rootfs__stream_checksum)
{
	char archive[400], sum[65], wrong[65], p[600];
	struct outcome o;
	struct bed b;
	struct rootfs_tree *t;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar.xz"), "xz",
				root_entries), ==, 0);
	sha256_of(archive, sum);
	memset(wrong, 'a', 64);
	wrong[64] = '\0';
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, archive, true, NULL, NULL, sum, &o), ==, 0);
	CHECK_STR(o.msg, "");
	CHECK_STR(o.sha256, sum);
	CHECK(o.downloaded);
	CHECK(o.res.download_bytes > 0);
	CHECK(file_is(path_in(p, sizeof(p), rootfs_tree_dir(t), "etc/hostname"), "board\n"));
	rootfs_tree_release(t);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, archive, true, NULL, NULL, wrong, &o), ==, 0);
	CHECK_INT(o.res.blame, ==, ROOTFS_BLAME_LAB);
	CHECK_CONTAINS(o.msg, "sha256 mismatch: got ");
	CHECK_CONTAINS(o.msg, sum);
	CHECK(!o.downloaded);
	rootfs_tree_release(t);
	run_removals(&b);
	CHECK_INT(rootfs_tree_count(b.fs, NULL), ==, 0);
	bed_close(&b);
	cleanup();
}

struct served {
	bool called;
	struct rootfs_tree *t;
	char err[256];
};

static void on_tree(struct rootfs_tree *t, const char *err, void *ud)
{
	struct served *s = ud;

	s->called = true;
	s->t = t;
	snprintf(s->err, sizeof(s->err), "%s", err ? err : "");
}

/* max_size: an unpack that takes the trees over it stops; the next job waits or fails. */
TEST(test_rootfs__size_limit)
{
	char archive[400], err[ROOTFS_MSG_MAX];
	struct served s = { 0 };
	struct rootfs_request *rq;
	struct outcome o;
	struct bed b;
	struct rootfs_tree *t, *t2;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar.xz"), "xz",
				root_entries), ==, 0);
	CHECK_INT(bed_open(&b, 1 << 20, true), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(unpack(&b, t, archive, true, NULL, NULL, NULL, &o), ==, 0);
	CHECK_INT(o.res.err, ==, -ENOSPC);
	CHECK_INT(o.res.blame, ==, ROOTFS_BLAME_LAB);
	CHECK_CONTAINS(o.msg, "the NFS export directory is full: its trees hold ");
	CHECK(!rootfs_tree_fits_alone(t));
	/* full, when_full = "fail": refused at once */
	CHECK_INT(rootfs_tree_request(b.fs, 43, 0, on_tree, &s, &t2, &rq, err, sizeof(err)), ==, -ENOSPC);
	CHECK_CONTAINS(err, "max_size is 1048576");
	rootfs_tree_release(t);
	run_removals(&b);
	CHECK_INT(rootfs_used(b.fs), ==, 0);
	bed_close(&b);
	cleanup();
}

TEST(test_rootfs__wait_for_room)
{
	char err[ROOTFS_MSG_MAX];
	struct served s = { 0 }, s2 = { 0 };
	struct rootfs_request *rq, *rq2;
	struct bed b;
	struct rootfs_tree *t, *t2;

	setup();
	CHECK_INT(bed_open(&b, 1 << 20, false), ==, 0);
	t = new_tree(&b);
	CHECK(t);
	CHECK_INT(rootfs_tree_grow(t, 1 << 20, err, sizeof(err)), ==, 0);
	CHECK_INT(rootfs_tree_request(b.fs, 43, 0, on_tree, &s, &t2, &rq, err, sizeof(err)), ==, 1);
	CHECK(rq && !t2);
	CHECK_INT(rootfs_tree_request(b.fs, 44, 0, on_tree, &s2, &t2, &rq2, err, sizeof(err)), ==, 1);
	rootfs_request_cancel(rq2);
	loop_run_once(b.loop, 0);
	CHECK(!s.called);
	rootfs_tree_release(t);
	run_removals(&b);
	run_until(b.loop, &s.called);
	CHECK(s.t);
	CHECK_STR(s.err, "");
	CHECK(!s2.called);
	CHECK(strstr(rootfs_tree_dir(s.t), "/43-"));
	/* a root stopped by the limit waits until its size fits beside the others */
	CHECK_INT(rootfs_tree_grow(s.t, 600 << 10, err, sizeof(err)), ==, 0);
	memset(&s2, 0, sizeof(s2));
	CHECK_INT(rootfs_tree_request(b.fs, 45, 600 << 10, on_tree, &s2, &t2, &rq2, err,
				      sizeof(err)), ==, 1);
	CHECK_INT(rootfs_tree_request(b.fs, 46, 0, on_tree, &s, &t2, &rq, err, sizeof(err)), ==, 1);
	loop_run_once(b.loop, 0);
	CHECK(!s2.called);
	rootfs_tree_release(s.t);
	memset(&s, 0, sizeof(s));
	run_removals(&b);
	run_until(b.loop, &s.called);
	CHECK(s2.called && s2.t && s.called && s.t);
	rootfs_tree_release(s2.t);
	rootfs_tree_release(s.t);
	run_removals(&b);
	bed_close(&b);
	cleanup();
}

/* Trees a killed labd left are removed at start; nothing else of the directory is. */
TEST(test_rootfs__stale_trees_removed)
{
	char p[600];
	struct bed b;

	setup();
	mkdir(path_in(p, sizeof(p), exports, "7-abcDE9"), 0755);
	mkdir(path_in(p, sizeof(p), exports, "7-abcDE9/etc"), 0555);
	mkdir(path_in(p, sizeof(p), exports, ROOTFS_REMOVING_PREFIX "8-zzzzzz"), 0755);
	mkdir(path_in(p, sizeof(p), exports, "keep"), 0755);
	mkdir(path_in(p, sizeof(p), exports, "9-abc"), 0755);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	run_removals(&b);
	CHECK_INT(access(path_in(p, sizeof(p), exports, "7-abcDE9"), F_OK), ==, -1);
	CHECK_INT(access(path_in(p, sizeof(p), exports, ROOTFS_REMOVING_PREFIX "7-abcDE9"), F_OK), ==, -1);
	CHECK_INT(access(path_in(p, sizeof(p), exports, ROOTFS_REMOVING_PREFIX "8-zzzzzz"), F_OK), ==, -1);
	CHECK_INT(access(path_in(p, sizeof(p), exports, "keep"), F_OK), ==, 0);
	CHECK_INT(access(path_in(p, sizeof(p), exports, "9-abc"), F_OK), ==, 0);
	bed_close(&b);
	cleanup();
}

/* Run the helper in a child of this test, as @uid (when >= 0), in a fresh mount namespace
 * with a @tmpfs_kib tmpfs on the tree (when > 0); its output into @out. */
static int helper_in_child(const char *tree, const char *archive, int uid, int tmpfs_kib,
			   char *out, size_t size)
{
	char opts[64], *argv[] = { "rootfs-helper", "unpack", "--tree", (char *)tree, NULL };
	int fds[2], status = -1;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(open(archive, O_RDONLY), 3);
		snprintf(opts, sizeof(opts), "size=%dk", tmpfs_kib);
		if (tmpfs_kib && (unshare(CLONE_NEWNS) < 0 ||
				  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
				  mount("tmpfs", tree, "tmpfs", 0, opts) < 0))
			_exit(77);
		if (uid >= 0 && (setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0))
			_exit(78);
		_exit(rootfs_helper_main(4, argv));
	}
	close(fds[1]);
	while ((r = read(fds[0], out + n, size - 1 - (size_t)n)) > 0)
		n += r;
	out[n] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Without root's rights: files are the helper's user's, device nodes left out, no failure. */
TEST(test_rootfs__unprivileged)
{
	char archive[400], tree[400], out[4096], p[600];
	struct stat st;

	if (geteuid() != 0)
		TEST_SKIP("the helper runs as another user only when the test runs as root");
	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar"), NULL,
				root_entries), ==, 0);
	path_in(tree, sizeof(tree), tmp, "tree");
	CHECK_INT(mkdir(tree, 0755), ==, 0);
	CHECK_INT(chown(tree, 65534, 65534), ==, 0);
	CHECK_INT(chmod(tmp, 0755), ==, 0);
	CHECK_INT(helper_in_child(tree, archive, 65534, 0, out, sizeof(out)), ==, 0);
	CHECK_CONTAINS(out, "done 3145748 ");
	CHECK_CONTAINS(out, " 1\n");	/* one device node left out */
	CHECK_INT(stat(path_in(p, sizeof(p), tree, "home/user/notes"), &st), ==, 0);
	CHECK_INT(st.st_uid, ==, 65534);
	CHECK_INT(access(path_in(p, sizeof(p), tree, "dev/null"), F_OK), ==, -1);
	CHECK_INT(lstat(path_in(p, sizeof(p), tree, "lib"), &st), ==, 0);
	CHECK(S_ISLNK(st.st_mode));
	cleanup();
}

/* A full disk: the lab's fault, with the system's words. */
TEST(test_rootfs__disk_full)
{
	char archive[400], tree[400], out[4096];
	int r;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar"), NULL,
				root_entries), ==, 0);
	path_in(tree, sizeof(tree), tmp, "tree");
	CHECK_INT(mkdir(tree, 0755), ==, 0);
	r = helper_in_child(tree, archive, -1, 1024, out, sizeof(out));
	if (r == 77) {
		cleanup();
		TEST_SKIP("cannot mount a tmpfs in a mount namespace of its own here");
	}
	CHECK_INT(r, ==, 1);
	CHECK_CONTAINS(out, "error lab cannot write 'var/big'");
	CHECK_CONTAINS(out, "No space left on device");
	cleanup();
}

/* normalize and resolve, on their own */
TEST(test_rootfs__paths)
{
	struct strbuf sb = STRBUF_INIT;
	struct rootfs_resolver rs;
	char p[600], why[256];

	CHECK_INT(rootfs_normalize("./usr//lib/./x/", &sb), ==, 0);
	CHECK_STR(sb.buf, "usr/lib/x");
	CHECK_INT(rootfs_normalize("./", &sb), ==, 0);
	CHECK_STR(sb.buf, "");
	CHECK_INT(rootfs_normalize("/etc", &sb), ==, -EPERM);
	CHECK_INT(rootfs_normalize("a/../b", &sb), ==, -EINVAL);
	CHECK_INT(rootfs_normalize("a/..b/c..", &sb), ==, 0);
	setup();
	mkdir(path_in(p, sizeof(p), tmp, "usr"), 0755);
	mkdir(path_in(p, sizeof(p), tmp, "usr/lib"), 0755);
	CHECK_INT(symlink("usr/lib", path_in(p, sizeof(p), tmp, "lib")), ==, 0);
	CHECK_INT(symlink("/usr", path_in(p, sizeof(p), tmp, "abs")), ==, 0);
	CHECK_INT(rootfs_resolver_open(&rs, tmp), ==, 0);
	CHECK_INT(rootfs_resolve(&rs, "lib/modules/x.ko", false, &sb, why, sizeof(why)), ==, 0);
	CHECK_STR(sb.buf, "usr/lib/modules/x.ko");
	CHECK_INT(rootfs_resolve(&rs, "lib/modules/y.ko", false, &sb, why, sizeof(why)), ==, 0);
	CHECK_STR(sb.buf, "usr/lib/modules/y.ko");
	CHECK_INT(rootfs_resolve(&rs, "lib", true, &sb, why, sizeof(why)), ==, 0);
	CHECK_STR(sb.buf, "usr/lib");
	CHECK_INT(rootfs_resolve(&rs, "lib", false, &sb, why, sizeof(why)), ==, 0);
	CHECK_STR(sb.buf, "lib");
	CHECK_INT(rootfs_resolve(&rs, "new/dir/f", false, &sb, why, sizeof(why)), ==, 0);
	CHECK_STR(sb.buf, "new/dir/f");
	CHECK_INT(rootfs_resolve(&rs, "abs/x", false, &sb, why, sizeof(why)), ==, -EXDEV);
	CHECK_CONTAINS(why, "'abs' goes through a symbolic link that leaves the tree");
	rootfs_resolver_close(&rs);
	strbuf_release(&sb);
	cleanup();
}

/* Several roots streaming at once, each its own pipe and helper: all in, each counted. */
TEST(test_rootfs__concurrent)
{
	enum { N = 4 };
	char archive[400], url[600], p[600];
	struct outcome o[N];
	struct rootfs_tree *t[N];
	struct rootfs_unpack *u;
	struct bed b;
	bool all = false;

	setup();
	CHECK_INT(write_archive(path_in(archive, sizeof(archive), tmp, "root.tar.gz"), "gzip",
				root_entries), ==, 0);
	snprintf(url, sizeof(url), "file://%s", archive);
	CHECK_INT(bed_open(&b, 0, false), ==, 0);
	memset(o, 0, sizeof(o));
	for (int i = 0; i < N; i++) {
		struct rootfs_unpack_req req = { .http = b.http, .url = url, .what = "a root" };

		t[i] = new_tree(&b);
		CHECK(t[i]);
		req.tree = t[i];
		CHECK_INT(rootfs_unpack_start(b.fs, &req, on_unpacked, &o[i], &u), ==, 0);
	}
	for (int k = 0; k < 3000 && !all; k++) {
		loop_run_once(b.loop, 10 * USEC_PER_MSEC);
		all = true;
		for (int i = 0; i < N; i++)
			all = all && o[i].done;
	}
	CHECK(all);
	for (int i = 0; i < N; i++) {
		CHECK_STR(o[i].msg, "");
		CHECK_INT(o[i].res.bytes, ==, (3 << 20) + 20);
		CHECK(file_is(path_in(p, sizeof(p), rootfs_tree_dir(t[i]), "etc/hostname"), "board\n"));
	}
	CHECK_INT(rootfs_used(b.fs), ==, N * ((3 << 20) + 20));
	CHECK_INT(rootfs_tree_count(b.fs, NULL), ==, N);
	for (int i = 0; i < N; i++)
		rootfs_tree_release(t[i]);
	run_removals(&b);
	CHECK_INT(rootfs_used(b.fs), ==, 0);
	bed_close(&b);
	cleanup();
}

TEST_LIST(test_rootfs__paths, test_rootfs__unpack_keeps_metadata, test_rootfs__merged_usr_kept,
	  test_rootfs__prefix_and_into, test_rootfs__hostile_archives,
	  test_rootfs__corrupt_and_truncated, test_rootfs__stream_checksum,
	  test_rootfs__size_limit, test_rootfs__wait_for_room, test_rootfs__stale_trees_removed,
	  test_rootfs__concurrent, test_rootfs__unprivileged, test_rootfs__disk_full);
