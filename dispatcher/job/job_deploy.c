// SPDX-License-Identifier: GPL-2.0-or-later
/* job_deploy.c -- the deploy action of a job: where to stage which artifacts */
#include "job/job_walk.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"

/*
 *	deploy:
 *	  to: tftp | tmpfs | none | sdmux | fastboot | nfs
 *	  kernel: {url: ..., sha256sum: ..., compression: gz | xz, type: image | zimage | uimage}
 *	  ramdisk: {url: ..., header: u-boot}
 *	  dtb, modules, rootfs, nfsrootfs, tee, initrd: {url: ...}
 *	  dtbo: [{url: ...}, ...]			(dtbo0, dtbo1 ...: {DTBO0} ...)
 *	  images: {LABEL: {url: ...}, ...}		(LAVA's tmpfs style, any label)
 *	  (each) image_arg: '-hda {rootfs} -m 1024'	(tmpfs: QEMU arguments, job_qemu.c)
 *	  rootfs: {..., format: ext4, apply-overlay: true}	(tmpfs: tests written in)
 *	  modules: {..., path: /}			(where in the root they go)
 *	  os: debian				(how test definitions install their deps)
 *
 * The ramdisk (or initrd) gets the deploy's kernel modules and the job's test
 * overlay appended as a second cpio archive (overlay/overlay_build.h), unless
 * `install_modules: false` / `install_overlay: false` say otherwise.  A root
 * image of a tmpfs deploy with `apply-overlay: true` (format ext2/3/4) gets
 * them written into the job's copy of it instead (modules at their `path`).
 *
 * An NFS root (to: tftp or nfs, doc/nfs.md) is unpacked into a tree of the
 * lab's export directory:
 *
 *	  nfsrootfs: {url: ..., compression: xz, prefix: rootfs/,
 *		      overlays: {NAME: {url: ..., compression: ..., path: /opt}},
 *		      install_modules: true, install_overlay: true, apply-overlay: true}
 *	  modules: {url: ..., path: /}	(also into the root, at path)
 *
 * Artifacts are otherwise staged exactly as downloaded (after decompression),
 * so every other LAVA key that would have the dispatcher modify, convert or
 * unpack them is unsupported.  image_arg, on a tmpfs deploy, gives QEMU what
 * job_qemu.c allows; on other deploys LAVA ignores it, and labd notes that.
 */

#define DEPLOY_MAX_ARTIFACTS 32
#define DEPLOY_MAX_LABEL 64
#define DEPLOY_SHA256_LEN 64

static const char *const deploy_labels[] = {
	"kernel", "dtb", "ramdisk", "modules", "rootfs", "nfsrootfs", "tee", "initrd", NULL,
};

static const struct job_doc_key deploy_keys[] = {
	{ "to", JOB_KEY_KNOWN, NULL },
	{ "os", JOB_KEY_KNOWN, NULL },
	{ "images", JOB_KEY_KNOWN, NULL },
	{ "kernel", JOB_KEY_KNOWN, NULL },
	{ "dtb", JOB_KEY_KNOWN, NULL },
	{ "ramdisk", JOB_KEY_KNOWN, NULL },
	{ "modules", JOB_KEY_KNOWN, NULL },
	{ "rootfs", JOB_KEY_KNOWN, NULL },
	{ "nfsrootfs", JOB_KEY_KNOWN, NULL },
	{ "tee", JOB_KEY_KNOWN, NULL },
	{ "initrd", JOB_KEY_KNOWN, NULL },
	{ "dtbo", JOB_KEY_KNOWN, NULL },
	{ "preseed", JOB_KEY_UNSUPPORTED, "installers are not supported" },
	{ "extra_files", JOB_KEY_UNSUPPORTED, "only named artifacts are staged" },
	{ "persistent_nfs", JOB_KEY_UNSUPPORTED,
	  "NFS roots kept by the lab are not supported: labd never mounts NFS and writes only into "
	  "trees it unpacked itself; deploy the root as 'nfsrootfs' (a tarball unpacked per job)" },
	{ "authorize", JOB_KEY_UNSUPPORTED, "ssh access to the board is not supported" },
	{ "postprocess", JOB_KEY_UNSUPPORTED, "jobs cannot run commands on the lab host" },
	{ "docker", JOB_KEY_UNSUPPORTED, "deploys do not run in containers on the lab host" },
	{ "uefi", JOB_KEY_UNSUPPORTED, "the device type chooses the board's firmware" },
	{ "root_partition", JOB_KEY_IGNORED,
	  "it names the partition of a disk image that gets the test overlay; this deploy writes none" },
	{ "type", JOB_KEY_UNSUPPORTED, "deploys are not typed: 'to' says where images go" },
	{ NULL, 0, NULL },
};

static const struct job_doc_key artifact_keys[] = {
	{ "url", JOB_KEY_KNOWN, NULL },
	{ "sha256sum", JOB_KEY_KNOWN, NULL },
	{ "compression", JOB_KEY_KNOWN, NULL },
	{ "type", JOB_KEY_KNOWN, NULL },
	{ "header", JOB_KEY_KNOWN, NULL },
	{ "use_cache", JOB_KEY_IGNORED, "labd caches only artifacts with a sha256sum, keyed by URL and checksum: a cached copy is never stale" },
	{ "md5sum", JOB_KEY_KNOWN, NULL },
	{ "sha512sum", JOB_KEY_KNOWN, NULL },
	{ "archive", JOB_KEY_UNSUPPORTED,
	  "artifacts are staged as downloaded, archives are not unpacked" },
	{ "format", JOB_KEY_KNOWN, NULL },	/* informational without apply-overlay */
	{ "overlays", JOB_KEY_KNOWN, NULL },	/* images: {} or {lava: true}; nfsrootfs: archives */
	{ "headers", JOB_KEY_UNSUPPORTED, "downloads send no extra HTTP headers" },
	{ "install_modules", JOB_KEY_KNOWN, NULL },
	{ "install_overlay", JOB_KEY_KNOWN, NULL },
	{ "prefix", JOB_KEY_KNOWN, NULL },		/* nfsrootfs only */
	{ "path", JOB_KEY_KNOWN, NULL },		/* modules only */
	{ "reboot", JOB_KEY_UNSUPPORTED, "boards are not rebooted between flashed images" },
	{ "apply-overlay", JOB_KEY_KNOWN, NULL },	/* tmpfs root images, nfsrootfs */
	{ "image_arg", JOB_KEY_KNOWN, NULL },	/* QEMU: job_qemu.c's set */
	{ "sparse", JOB_KEY_KNOWN, NULL },	/* fastboot */
	{ NULL, 0, NULL },
};

/* An entry of nfsrootfs' `overlays`: a tarball unpacked into the root at `path`. */
static const struct job_doc_key root_overlay_keys[] = {
	{ "url", JOB_KEY_KNOWN, NULL },
	{ "compression", JOB_KEY_KNOWN, NULL },
	{ "format", JOB_KEY_KNOWN, NULL },
	{ "path", JOB_KEY_KNOWN, NULL },
	{ "sha256sum", JOB_KEY_KNOWN, NULL },
	{ "md5sum", JOB_KEY_KNOWN, NULL },
	{ "sha512sum", JOB_KEY_KNOWN, NULL },
	{ NULL, 0, NULL },
};

static bool deploy_is_named(const char *label)
{
	size_t i;

	for (i = 0; deploy_labels[i]; i++)
		if (!strcmp(deploy_labels[i], label))
			return true;
	return false;
}

/* A checksum @key of @digits hexadecimal digits, kept in lower case. */
static int deploy_walk_checksum(struct job_doc *doc, const json_t *spec, const char *key,
				size_t digits, char **ret)
{
	const char *s;
	size_t i;
	int r = job_doc_get_str(doc, spec, key, false, &s);

	if (r <= 0)
		return r;
	for (i = 0; s[i] && isxdigit((unsigned char)s[i]); i++)
		;
	if (i != digits || s[i])
		return job_doc_error(doc, key, "'%s' must be %zu hexadecimal digits", key, digits);
	*ret = strdup(s);
	if (!*ret)
		return job_doc_nomem(doc);
	for (i = 0; (*ret)[i]; i++)
		(*ret)[i] = (char)tolower((unsigned char)(*ret)[i]);
	return 1;
}

static int deploy_walk_sha256(struct job_doc *doc, const json_t *spec, struct job_artifact *a)
{
	int r = deploy_walk_checksum(doc, spec, "sha256sum", DEPLOY_SHA256_LEN, &a->sha256sum);

	if (deploy_walk_checksum(doc, spec, "md5sum", 32, &a->md5sum) < 0 ||
	    deploy_walk_checksum(doc, spec, "sha512sum", 128, &a->sha512sum) < 0)
		r = -EINVAL;
	return r;
}

/* format: what the image is (qcow2, ext4 ...): information, but for apply-overlay. */
static int deploy_walk_image_format(struct job_doc *doc, const json_t *spec,
				    struct job_artifact *a)
{
	return job_doc_dup_str(doc, spec, "format", false, &a->format) < 0 ? -EINVAL : 0;
}

static bool deploy_is_ramdisk(const char *label)
{
	return !strcmp(label, "ramdisk") || !strcmp(label, "initrd");
}

/*
 * install_overlay / install_modules: false keeps the test overlay / modules
 * out of the ramdisk, or out of the NFS root.
 */
static int deploy_walk_ramdisk_flag(struct job_doc *doc, const json_t *spec,
				    const struct job_artifact *a, const char *key, bool *no)
{
	bool v = true;
	int r = job_doc_get_bool(doc, spec, key, &v);

	if (r > 0 && !deploy_is_ramdisk(a->label) && strcmp(a->label, "nfsrootfs"))
		return job_doc_error(doc, key, "'%s' only applies to the ramdisk and the nfsrootfs",
				     key);
	*no = !v;
	return r;
}

/* compression, kernel type and ramdisk header */
static int deploy_walk_format(struct job_doc *doc, const json_t *spec, struct job_artifact *a)
{
	const char *s;
	int r = 0;

	if (job_doc_get_str(doc, spec, "compression", false, &s) > 0) {
		if (strcmp(s, "gz") && strcmp(s, "xz") && strcmp(s, "bz2") && strcmp(s, "zstd") &&
		    strcmp(s, "zip"))
			r = job_doc_error(doc, "compression", "unsupported compression '%.100s' (supported: gz, xz, bz2, zstd, zip)", s);
		else if (!strcmp(s, "zip") && (!strcmp(a->label, "nfsrootfs") || a->into_root))
			r = job_doc_error(doc, "compression", "an NFS root and its overlays are tar archives: compression 'zip' is not one");
		else if (!(a->compression = strdup(s)))
			r = job_doc_nomem(doc);
	}
	if (job_doc_get_str(doc, spec, "type", false, &s) > 0) {
		if (strcmp(a->label, "kernel"))
			r = job_doc_error(doc, "type", "'type' only applies to the kernel");
		else if (strcmp(s, "image") && strcmp(s, "zimage") && strcmp(s, "uimage"))
			r = job_doc_error(doc, "type", "unsupported kernel type '%.100s' (supported: image, zimage, uimage)", s);
		else if (!(a->kernel_type = strdup(s)))
			r = job_doc_nomem(doc);
	}
	if (deploy_walk_ramdisk_flag(doc, spec, a, "install_overlay", &a->no_overlay) < 0 ||
	    deploy_walk_ramdisk_flag(doc, spec, a, "install_modules", &a->no_modules) < 0)
		r = -EINVAL;
	if (job_doc_get_str(doc, spec, "header", false, &s) > 0) {
		if (strcmp(a->label, "ramdisk"))
			r = job_doc_error(doc, "header", "'header' only applies to the ramdisk");
		else if (strcmp(s, "u-boot"))
			r = job_doc_error(doc, "header", "unsupported header '%.100s' (supported: u-boot)", s);
		else
			a->uboot_header = true;
	}
	return r;
}

/*
 * LAVA's image_arg: a piece of QEMU's command line for this image.  On a
 * tmpfs deploy, its options go into the deploy's QEMU arguments (job_qemu.c);
 * elsewhere LAVA ignores it, and so does labd, with a note.
 */
static int deploy_walk_image_arg(struct job_doc *doc, const json_t *spec, struct job_deploy *d)
{
	char **words = NULL;
	const char *arg;
	int r = job_doc_get_str(doc, spec, "image_arg", false, &arg);

	if (r <= 0)
		return r;
	if (d->to != DEPLOY_TO_TMPFS)
		return job_doc_note(doc, "image_arg", "'image_arg' ignored: it only tells QEMU how to attach the image, and this deploy is to '%s'",
				    deploy_to_name(d->to));
	r = job_qemu_split(doc, "image_arg", arg, &words);
	if (!r)
		r = job_qemu_parse(doc, "image_arg", words, &d->qemu, true);
	strv_free(words);
	return r;
}

/* apply-overlay, overlays: {} or {lava: true}: the test overlay goes into this root image. */
static int deploy_walk_apply(struct job_doc *doc, const json_t *spec, const struct job_deploy *d,
			     struct job_artifact *a)
{
	json_t *ov = json_object_get(spec, "overlays"), *lava = json_object_get(ov, "lava");
	const char *v;
	int r;

	if (!strcmp(a->label, "nfsrootfs"))
		return 0;	/* deploy_walk_nfsroot_keys(), deploy_walk_root_overlays() */
	r = job_doc_get_bool(doc, spec, "apply-overlay", &a->apply_overlay);
	if (r < 0)
		return r;
	if (ov && (!json_is_object(ov) || json_object_size(ov) > (lava ? 1 : 0) ||
		   (lava && !json_is_boolean(lava))))
		return job_doc_error(doc, "overlays", "unsupported 'overlays': only {} and {lava: true} (the test overlay, as apply-overlay) are taken; archives are not added to images");
	a->apply_overlay |= json_is_true(lava);
	if (!a->apply_overlay)
		return 0;
	if (d->to != DEPLOY_TO_TMPFS)
		return job_doc_error(doc, "apply-overlay", "unsupported 'apply-overlay' on a deploy to '%s': the test overlay goes into root file system images of tmpfs deploys",
				     deploy_to_name(d->to));
	if (job_doc_get_str(doc, spec, "format", false, &v) <= 0 ||
	    (strcmp(v, "ext4") && strcmp(v, "ext3") && strcmp(v, "ext2")))
		return job_doc_error(doc, "apply-overlay", "'apply-overlay' needs 'format: ext4' (or ext2, ext3): labd writes the overlay into ext file systems");
	return 0;
}

/* sparse: fastboot images. */
static int deploy_walk_sparse(struct job_doc *doc, const json_t *spec, const struct job_deploy *d,
			      struct job_artifact *a)
{
	if (job_doc_get_bool(doc, spec, "sparse", &a->sparse) < 0)
		return -EINVAL;
	if (a->sparse && d->to != DEPLOY_TO_FASTBOOT)
		return job_doc_error(doc, "sparse", "'sparse: true' only applies to images flashed with fastboot");
	return 0;
}

/* A path in an NFS root or an archive: relative or absolute as @absolute says, no "..". */
static bool deploy_path_ok(const char *p, bool absolute)
{
	if ((*p == '/') != absolute)
		return false;
	for (const char *c = p; *c; c += strcspn(c, "/"), c += *c == '/')
		if (!strncmp(c, "..", 2) && (!c[2] || c[2] == '/'))
			return false;
	return true;
}

/* `path` (modules, the root's overlays): where in the root file system they go; NULL: "/". */
static int deploy_walk_root_path(struct job_doc *doc, const json_t *spec, struct job_artifact *a)
{
	int r = job_doc_dup_str(doc, spec, "path", false, &a->path);

	if (r <= 0)
		return r;
	if (strcmp(a->label, "modules") && !a->into_root)
		return job_doc_error(doc, "path", "'path' only applies to the modules and the "
				     "nfsrootfs' overlays: where in the root file system they go");
	if (!deploy_path_ok(a->path, true))
		return job_doc_error(doc, "path", "'path' must be an absolute path without '..', not '%.100s'",
				     a->path);
	return 0;
}

/* nfsrootfs' own keys: prefix, apply-overlay (LKFT's: the overlay goes into an NFS root anyway). */
static int deploy_walk_nfsroot_keys(struct job_doc *doc, const json_t *spec,
				    struct job_artifact *a)
{
	bool nfs = !strcmp(a->label, "nfsrootfs"), apply = true;
	const char *s;
	int r = 0;

	if (job_doc_get_str(doc, spec, "prefix", false, &s) > 0) {
		if (!nfs)
			r = job_doc_error(doc, "prefix", "'prefix' only applies to the nfsrootfs");
		else if (!deploy_path_ok(s, false))
			r = job_doc_error(doc, "prefix", "'prefix' must be a directory of the archive: a relative path without '..', not '%.100s'", s);
		else if (!(a->prefix = strdup(s)))
			r = job_doc_nomem(doc);
	}
	if (nfs && job_doc_get_bool(doc, spec, "apply-overlay", &apply) < 0)
		r = -EINVAL;
	return r;
}

/* The artifact @label of the mapping @parent, at the current path. */
static int deploy_walk_spec(struct job_doc *doc, const json_t *spec, const char *label,
			    struct job_deploy *d, struct job_artifact *a);

static int deploy_walk_artifact(struct job_doc *doc, const json_t *parent, const char *label,
				struct job_deploy *d, struct job_artifact *a)
{
	json_t *spec;
	size_t mark;
	int r;

	a->line = job_doc_line(doc, label);
	a->label = strdup(label);
	if (!a->label)
		return job_doc_nomem(doc);
	if (job_doc_get(doc, parent, label, JSON_OBJECT, true, &spec) <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, label);
	r = deploy_walk_spec(doc, spec, label, d, a);
	job_doc_leave(doc, mark);
	return r;
}

/* The artifact mapping @spec, at the current path. */
static int deploy_walk_spec(struct job_doc *doc, const json_t *spec, const char *label,
			    struct job_deploy *d, struct job_artifact *a)
{
	int r = job_doc_check_keys(doc, spec, artifact_keys, NULL);

	if (job_doc_get_url(doc, spec, "url", &a->url) <= 0)
		r = -EINVAL;
	if (deploy_walk_sha256(doc, spec, a) < 0)
		r = -EINVAL;
	if (deploy_walk_format(doc, spec, a) < 0)
		r = -EINVAL;
	if (deploy_walk_image_arg(doc, spec, d) < 0)
		r = -EINVAL;
	if (deploy_walk_image_format(doc, spec, a) < 0)
		r = -EINVAL;
	if (deploy_walk_apply(doc, spec, d, a) < 0)
		r = -EINVAL;
	if (deploy_walk_sparse(doc, spec, d, a) < 0)
		r = -EINVAL;
	if (deploy_walk_nfsroot_keys(doc, spec, a) < 0 || deploy_walk_root_path(doc, spec, a) < 0)
		r = -EINVAL;
	return r;
}

/* dtbo: [{url: ...}, ...], the artifacts dtbo0, dtbo1 ... ({DTBO0} ...), as LAVA's. */
static int deploy_walk_dtbos(struct job_doc *doc, const json_t *obj, struct job_deploy *d)
{
	json_t *list, *item;
	char label[32];
	size_t i, mark, m;
	int r = job_doc_get(doc, obj, "dtbo", JSON_ARRAY, true, &list);

	if (r <= 0)
		return -EINVAL;
	mark = job_doc_enter(doc, "dtbo");
	json_array_foreach(list, i, item) {
		struct job_artifact *a = &d->artifacts[d->n_artifacts];

		m = job_doc_enter_index(doc, i);
		if (d->n_artifacts == DEPLOY_MAX_ARTIFACTS)
			r = job_doc_error(doc, NULL, "more than %d artifacts", DEPLOY_MAX_ARTIFACTS);
		else if (!json_is_object(item))
			r = job_doc_error(doc, NULL, "must be a mapping, not %s", job_doc_type_name(item));
		else {
			snprintf(label, sizeof(label), "dtbo%zu", i);
			d->n_artifacts++;
			a->line = job_doc_line(doc, NULL);
			a->label = strdup(label);
			if (!a->label)
				r = job_doc_nomem(doc);
			else if (deploy_walk_spec(doc, item, label, d, a) < 0)
				r = -EINVAL;
		}
		job_doc_leave(doc, m);
	}
	job_doc_leave(doc, mark);
	return r;
}

/* One of nfsrootfs' `overlays`, at the current path: the artifact "nfsrootfs-overlay-@name". */
static int deploy_walk_root_overlay(struct job_doc *doc, const json_t *spec, const char *name,
				    struct job_artifact *a)
{
	int r;

	a->line = job_doc_line(doc, NULL);
	a->into_root = true;
	if (asprintf(&a->label, "nfsrootfs-overlay-%s", name) < 0) {
		a->label = NULL;
		return job_doc_nomem(doc);
	}
	if (!json_is_object(spec))
		return job_doc_error(doc, NULL, "must be a mapping, not %s", job_doc_type_name(spec));
	r = job_doc_check_keys(doc, spec, root_overlay_keys, NULL);
	if (job_doc_get_url(doc, spec, "url", &a->url) <= 0)
		r = -EINVAL;
	if (deploy_walk_sha256(doc, spec, a) < 0 || deploy_walk_format(doc, spec, a) < 0 ||
	    deploy_walk_image_format(doc, spec, a) < 0 || deploy_walk_root_path(doc, spec, a) < 0)
		r = -EINVAL;
	return r;
}

/* nfsrootfs' `overlays: {NAME: {url, compression, format, path}}`: more artifacts. */
static int deploy_walk_root_overlays(struct job_doc *doc, const json_t *parent,
				     struct job_deploy *d)
{
	json_t *spec = json_object_get(parent, "nfsrootfs"), *overlays, *v;
	size_t mark = job_doc_enter(doc, "nfsrootfs"), m;
	const char *name;
	int r = job_doc_get(doc, spec, "overlays", JSON_OBJECT, false, &overlays);

	if (r <= 0) {
		job_doc_leave(doc, mark);
		return r < 0 ? -EINVAL : 0;
	}
	m = job_doc_enter(doc, "overlays");
	json_object_foreach(overlays, name, v) {
		size_t e;

		if (!strcmp(name, "lava") && json_is_boolean(v))
			continue;	/* the test overlay: it goes into the root anyway */
		if (!job_doc_is_name(name, DEPLOY_MAX_LABEL, "-_")) {
			r = job_doc_error(doc, name, "invalid overlay name '%.100s': use up to %d letters, digits, '-' and '_'",
					  name, DEPLOY_MAX_LABEL);
			continue;
		}
		if (d->n_artifacts == DEPLOY_MAX_ARTIFACTS) {
			r = job_doc_error(doc, name, "more than %d artifacts", DEPLOY_MAX_ARTIFACTS);
			continue;
		}
		e = job_doc_enter(doc, name);
		if (deploy_walk_root_overlay(doc, v, name, &d->artifacts[d->n_artifacts++]) < 0)
			r = -EINVAL;
		job_doc_leave(doc, e);
	}
	job_doc_leave(doc, m);
	job_doc_leave(doc, mark);
	return r < 0 ? -EINVAL : 0;
}

static int deploy_add(struct job_doc *doc, const json_t *parent, const char *label,
		      struct job_deploy *d)
{
	size_t i;
	int r;

	for (i = 0; i < d->n_artifacts; i++)
		if (!strcmp(d->artifacts[i].label, label))
			return job_doc_error(doc, label, "artifact '%s' is deployed twice", label);
	if (d->n_artifacts == DEPLOY_MAX_ARTIFACTS)
		return job_doc_error(doc, label, "more than %d artifacts", DEPLOY_MAX_ARTIFACTS);
	r = deploy_walk_artifact(doc, parent, label, d, &d->artifacts[d->n_artifacts++]);
	if (!strcmp(label, "nfsrootfs") && json_is_object(json_object_get(parent, label)) &&
	    deploy_walk_root_overlays(doc, parent, d) < 0)
		r = -EINVAL;
	return r;
}

static int deploy_walk_images(struct job_doc *doc, const json_t *obj, struct job_deploy *d)
{
	const char *label;
	json_t *images, *v;
	size_t mark;
	int r = job_doc_get(doc, obj, "images", JSON_OBJECT, false, &images);

	if (r <= 0)
		return r;
	mark = job_doc_enter(doc, "images");
	json_object_foreach(images, label, v) {
		if (!job_doc_is_name(label, DEPLOY_MAX_LABEL, "-_"))
			r = job_doc_error(doc, label, "invalid image label '%.100s': use up to %d letters, digits, '-' and '_'",
					  label, DEPLOY_MAX_LABEL);
		else if (deploy_add(doc, images, label, d) < 0)
			r = -EINVAL;
	}
	job_doc_leave(doc, mark);
	return r;
}

static bool deploy_has(const struct job_deploy *d, const char *label)
{
	for (size_t i = 0; i < d->n_artifacts; i++)
		if (!strcmp(d->artifacts[i].label, label))
			return true;
	return false;
}

/* The images the deploy's image_arg name are its own; one root image takes the overlay. */
static int deploy_check_qemu(struct job_doc *doc, const struct job_deploy *d)
{
	const struct job_qemu_args *q = &d->qemu;
	const char *files[] = { q->kernel, q->initrd, q->dtb };
	size_t i, applied = 0;
	int r = 0;

	for (i = 0; i < 3; i++)
		if (files[i] && !deploy_has(d, files[i]))
			r = job_doc_error(doc, NULL, "image_arg names '{%s}', which this deploy does not deploy",
					  files[i]);
	for (i = 0; i < q->n_drives; i++)
		if (q->drives[i].label && !deploy_has(d, q->drives[i].label))
			r = job_doc_error_at(doc, q->drives[i].line, "%s: image_arg names '{%s}', which this deploy does not deploy",
					     doc->path.buf, q->drives[i].label);
	for (i = 0; i < d->n_artifacts; i++)
		applied += d->artifacts[i].apply_overlay;
	if (applied > 1)
		r = job_doc_error(doc, NULL, "'apply-overlay' on %zu images: the test overlay goes into one", applied);
	return r;
}

/* An NFS root goes to a tftp or an nfs deploy; an nfs deploy has one. */
static int deploy_check_nfs(struct job_doc *doc, const struct job_deploy *d)
{
	const struct job_artifact *nfs = job_deploy_nfsrootfs(d);

	if (nfs && d->to != DEPLOY_TO_TFTP && d->to != DEPLOY_TO_NFS)
		return job_doc_error(doc, "nfsrootfs", "an NFS root is deployed 'to: tftp' or "
				     "'to: nfs', not '%s'", deploy_to_name(d->to));
	if (!nfs && d->to == DEPLOY_TO_NFS)
		return job_doc_error(doc, "to", "deploy to 'nfs' needs an 'nfsrootfs' (a root file system tarball)");
	return 0;
}

static int deploy_walk_artifacts(struct job_doc *doc, const json_t *obj, struct job_deploy *d)
{
	const char *key;
	json_t *v;
	int r = 0;

	d->artifacts = calloc(DEPLOY_MAX_ARTIFACTS, sizeof(*d->artifacts));
	if (!d->artifacts)
		return job_doc_nomem(doc);
	json_object_foreach((json_t *)obj, key, v) {
		if (!strcmp(key, "images"))
			r = deploy_walk_images(doc, obj, d) < 0 ? -EINVAL : r;
		else if (!strcmp(key, "dtbo"))
			r = deploy_walk_dtbos(doc, obj, d) < 0 ? -EINVAL : r;
		else if (deploy_is_named(key))
			r = deploy_add(doc, obj, key, d) < 0 ? -EINVAL : r;
	}
	if (d->to == DEPLOY_TO_NONE && d->n_artifacts)
		return job_doc_error(doc, "to", "deploy to 'none' takes no artifacts");
	if (d->to != DEPLOY_TO_NONE && !d->n_artifacts && !r)
		return job_doc_error(doc, "to", "nothing to deploy to '%s': name at least one artifact",
				     deploy_to_name(d->to));
	if (d->to == DEPLOY_TO_SDMUX && d->n_artifacts > 1)
		return job_doc_error(doc, "to", "deploy to 'sdmux' writes one image to the card, not %zu",
				     d->n_artifacts);
	if (deploy_check_nfs(doc, d) < 0)
		r = -EINVAL;
	return deploy_check_qemu(doc, d) < 0 ? -EINVAL : r;
}

int job_deploy_parse(struct job_doc *doc, const json_t *obj, struct job_deploy *ret)
{
	const char *to;
	int r;

	if (job_doc_get_str(doc, obj, "to", true, &to) <= 0)
		return -EINVAL;
	if (!strcmp(to, "tftp"))
		ret->to = DEPLOY_TO_TFTP;
	else if (!strcmp(to, "tmpfs"))
		ret->to = DEPLOY_TO_TMPFS;
	else if (!strcmp(to, "none"))
		ret->to = DEPLOY_TO_NONE;
	else if (!strcmp(to, "sdmux"))
		ret->to = DEPLOY_TO_SDMUX;
	else if (!strcmp(to, "fastboot"))
		ret->to = DEPLOY_TO_FASTBOOT;
	else if (!strcmp(to, "nfs"))
		ret->to = DEPLOY_TO_NFS;
	else
		return job_doc_error(doc, "to", "unsupported deploy method '%.100s' (supported: tftp, tmpfs, none, sdmux, fastboot, nfs)",
				     to);
	r = job_doc_check_keys(doc, obj, deploy_keys, job_action_keys);
	if (job_doc_dup_str(doc, obj, "os", false, &ret->os) < 0)
		r = -EINVAL;
	if (deploy_walk_artifacts(doc, obj, ret) < 0)
		r = -EINVAL;
	return r < 0 ? -EINVAL : 0;
}

void job_deploy_release(struct job_deploy *d)
{
	size_t i;

	for (i = 0; i < d->n_artifacts; i++) {
		free(d->artifacts[i].label);
		free(d->artifacts[i].url);
		free(d->artifacts[i].sha256sum);
		free(d->artifacts[i].md5sum);
		free(d->artifacts[i].sha512sum);
		free(d->artifacts[i].compression);
		free(d->artifacts[i].kernel_type);
		free(d->artifacts[i].format);
		free(d->artifacts[i].prefix);
		free(d->artifacts[i].path);
	}
	free(d->artifacts);
	free(d->os);
	job_qemu_release(&d->qemu);
	memset(d, 0, sizeof(*d));
}

const struct job_artifact *job_deploy_nfsrootfs(const struct job_deploy *d)
{
	for (size_t i = 0; i < d->n_artifacts; i++)
		if (!strcmp(d->artifacts[i].label, "nfsrootfs"))
			return &d->artifacts[i];
	return NULL;
}

bool job_uses_nfs(const struct job *job)
{
	for (size_t i = 0; i < job->n_actions; i++)
		if (job->actions[i].kind == JOB_ACTION_DEPLOY &&
		    job_deploy_nfsrootfs(&job->actions[i].deploy))
			return true;
	return false;
}
