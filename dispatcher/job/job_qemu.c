// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_qemu.c -- the QEMU arguments a job may give (image_arg, context
 * extra_options), read into a struct job_qemu_args
 *
 * LAVA builds QEMU's command line from its device type, the context's
 * extra_options and every image's image_arg, each a piece of a command line
 * ("-kernel {kernel} -append \"console=ttyS0 root=/dev/ram0\"").  labd's
 * device type owns the command line, so a job's pieces are split into words
 * as a shell would split them (quotes and backslashes, nothing expanded) and
 * only this set is accepted:
 *
 *	-append TEXT, --append TEXT	the kernel command line (added to the type's)
 *	-m N[M|G], -m size=N[M|G]	memory, MiB unless G
 *	-smp N, -smp cpus=N		CPUs
 *	-kernel {L}, -initrd {L}, -dtb {L}	the deploy's artifact L as that file
 *	-hda {L} ... -hdd {L}, -cdrom {L}	as a drive (-hda is index 0 ...)
 *	-drive file={L}[,format=raw|qcow2][,if=virtio|ide|scsi|sd]
 *	       [,media=disk|cdrom][,index=N][,readonly[=on|off]]
 *	-nographic			accepted, nothing to do: labd's QEMU never
 *					has a display, its serial line is labd's
 *
 * context extra_options (a list of such pieces) may give the same options but
 * the images; context memory is -m.
 *
 * Anything else (-device, -netdev, -chardev, -serial, -monitor, -object,
 * -plugin, -sandbox, a host path ...) is refused, naming the option.  Every
 * option may be written with two dashes, as QEMU allows.  Whether the device
 * type lets the job use what it gave (append_allowed, max_memory, max_cpus,
 * allowed_images) is job_check_device_type()'s.
 */
#include "job/job_walk.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strv.h"

#define QEMU_WORDS_MAX 64		/* words of one image_arg or extra_options */
#define QEMU_ARG_MAX 4096		/* bytes of one word */
#define QEMU_MEMORY_MAX (1024ULL * 1024)	/* MiB: 1 TiB, far above any type's limit */
#define QEMU_CPUS_MAX 1024
#define JOB_QEMU_LABEL_MAX 64		/* as the deploy's labels */
#define QEMU_ALLOWED "-append, -m, -smp, -kernel, -initrd, -dtb, -drive, -hda to -hdd, -cdrom, -nographic"

/* ---- words ---- */

/* One word of @s at *@pos into @w: quotes and backslashes as a shell reads them. */
static int split_word(const char *s, size_t *pos, struct strbuf *w)
{
	char quote = 0;
	size_t i = *pos;

	for (; s[i] && (quote || !isspace((unsigned char)s[i])); i++) {
		if (quote == '\'' && s[i] == '\'') {
			quote = 0;
		} else if (quote == '\'') {
			strbuf_addch(w, s[i]);
		} else if (s[i] == '\\' && s[i + 1] &&
			   (!quote || strchr("\"\\$`", s[i + 1]))) {
			strbuf_addch(w, s[++i]);
		} else if (quote && s[i] == '"') {
			quote = 0;
		} else if (!quote && (s[i] == '"' || s[i] == '\'')) {
			quote = s[i];
		} else {
			strbuf_addch(w, s[i]);
		}
	}
	*pos = i;
	return quote ? -EINVAL : 0;
}

int job_qemu_split(struct job_doc *doc, const char *key, const char *text, char ***words)
{
	struct strbuf w = STRBUF_INIT;
	size_t pos = 0, n = strv_length(*words);
	int r = 0;

	for (;;) {
		while (isspace((unsigned char)text[pos]))
			pos++;
		if (!text[pos])
			break;
		strbuf_reset(&w);
		if (split_word(text, &pos, &w) < 0) {
			r = job_doc_error(doc, key, "unterminated quote in '%.100s'", text);
			break;
		}
		if (++n > QEMU_WORDS_MAX || w.len > QEMU_ARG_MAX) {
			r = job_doc_error(doc, key, "'%s' is too long: at most %d words of %d bytes",
					  key, QEMU_WORDS_MAX, QEMU_ARG_MAX);
			break;
		}
		if (strv_push(words, w.buf ? w.buf : "") < 0) {
			r = job_doc_nomem(doc);
			break;
		}
	}
	strbuf_release(&w);
	return r;
}

/* ---- values ---- */

/* "{label}" -> label (a new string), else NULL. */
static char *label_of(const char *word)
{
	size_t n = strlen(word);
	char *label;

	if (n < 3 || word[0] != '{' || word[n - 1] != '}')
		return NULL;
	label = strndup(word + 1, n - 2);
	if (label && !job_doc_is_name(label, JOB_QEMU_LABEL_MAX, "-_")) {
		free(label);
		label = NULL;
	}
	return label;
}

/* "4096", "4096M", "4G", "size=4G" -> MiB; 0 when invalid. */
static uint64_t parse_memory(const char *v)
{
	unsigned long long n;
	char *end;

	if (!strncmp(v, "size=", 5))
		v += 5;
	if (!isdigit((unsigned char)*v))
		return 0;
	n = strtoull(v, &end, 10);
	if ((*end == 'G' || *end == 'g') && !end[1])
		n = n > QEMU_MEMORY_MAX ? 0 : n * 1024;
	else if (*end && !((*end == 'M' || *end == 'm') && !end[1]))
		return 0;
	return n <= QEMU_MEMORY_MAX ? n : 0;
}

/* "4" or "cpus=4" -> 4; 0 when invalid. */
static unsigned parse_cpus(const char *v)
{
	unsigned long n;
	char *end;

	if (!strncmp(v, "cpus=", 5))
		v += 5;
	if (!isdigit((unsigned char)*v))
		return 0;
	n = strtoul(v, &end, 10);
	return *end || n > QEMU_CPUS_MAX ? 0 : (unsigned)n;
}

/* ---- drives ---- */

static int drive_add(struct job_doc *doc, struct job_qemu_args *q, struct job_qemu_drive **ret)
{
	struct job_qemu_drive *v = realloc(q->drives, (q->n_drives + 1) * sizeof(*v));

	if (!v)
		return job_doc_nomem(doc);
	q->drives = v;
	*ret = &v[q->n_drives++];
	memset(*ret, 0, sizeof(**ret));
	(*ret)->index = -1;
	return 0;
}

/* One sub-option of -drive: name=value (or readonly alone). */
static int drive_option(struct job_doc *doc, const char *key, struct job_qemu_drive *d,
			const char *name, const char *value)
{
	static const char *const formats[] = { "raw", "qcow2", NULL };
	static const char *const ifaces[] = { "virtio", "ide", "scsi", "sd", NULL };
	static const char *const medias[] = { "disk", "cdrom", NULL };
	char **slot = NULL;
	const char *const *allowed = NULL;

	if (!strcmp(name, "file")) {
		free(d->label);
		d->label = label_of(value);
		if (!d->label)
			return job_doc_error(doc, key, "-drive file='%.100s': a job's drive is one of its images, named '{label}'", value);
		return 0;
	}
	if (!strcmp(name, "readonly") && (!*value || !strcmp(value, "on") || !strcmp(value, "off"))) {
		d->readonly = strcmp(value, "off");
		return 0;
	}
	if (!strcmp(name, "index") && isdigit((unsigned char)*value) && strlen(value) < 3) {
		d->index = atoi(value);
		return 0;
	}
	if (!strcmp(name, "format"))
		slot = &d->format, allowed = formats;
	else if (!strcmp(name, "if"))
		slot = &d->interface, allowed = ifaces;
	else if (!strcmp(name, "media"))
		slot = &d->media, allowed = medias;
	for (size_t i = 0; allowed && allowed[i]; i++) {
		if (strcmp(value, allowed[i]))
			continue;
		free(*slot);
		*slot = strdup(value);
		return *slot ? 0 : job_doc_nomem(doc);
	}
	return job_doc_error(doc, key, "-drive %s%s%.100s is not allowed in a job's drive (allowed: file={label}, format=raw|qcow2, if=virtio|ide|scsi|sd, media=disk|cdrom, index=N, readonly)",
			     name, *value ? "=" : "", value);
}

/* -drive SPEC: comma-separated sub-options (QEMU's ",," escape is not taken). */
static int parse_drive(struct job_doc *doc, const char *key, const char *spec,
		       struct job_qemu_args *q)
{
	struct job_qemu_drive *d;
	char *copy, *opt, *save = NULL, *eq;
	int r;

	if (strstr(spec, ",,"))
		return job_doc_error(doc, key, "-drive '%.100s': ',,' is not taken", spec);
	r = drive_add(doc, q, &d);
	copy = r ? NULL : strdup(spec);
	if (!r && !copy)
		return job_doc_nomem(doc);
	d->line = job_doc_line(doc, key);
	for (opt = strtok_r(copy, ",", &save); opt && !r; opt = strtok_r(NULL, ",", &save)) {
		eq = strchr(opt, '=');
		if (eq)
			*eq++ = '\0';
		r = drive_option(doc, key, d, opt, eq ? eq : "");
	}
	free(copy);
	if (!r && !d->label)
		r = job_doc_error(doc, key, "-drive '%.100s' names no file={label}", spec);
	return r;
}

/* -hda {L} ... -hdd {L}, -cdrom {L}: a drive at a fixed index. */
static int parse_hd(struct job_doc *doc, const char *key, const char *opt, const char *value,
		    struct job_qemu_args *q)
{
	struct job_qemu_drive *d;
	char *label = label_of(value);
	int r;

	if (!label)
		return job_doc_error(doc, key, "%s '%.100s': a job's drive is one of its images, named '{label}'",
				     opt, value);
	r = drive_add(doc, q, &d);
	if (r) {
		free(label);
		return r;
	}
	d->label = label;
	d->line = job_doc_line(doc, key);
	d->index = strcmp(opt, "-cdrom") ? opt[3] - 'a' : 2;
	d->media = strdup(strcmp(opt, "-cdrom") ? "disk" : "cdrom");
	return d->media ? 0 : job_doc_nomem(doc);
}

/* ---- options ---- */

/* -kernel/-initrd/-dtb {L}: which image QEMU loads as that file. */
static int parse_file(struct job_doc *doc, const char *key, const char *opt, const char *value,
		      char **slot)
{
	char *label = label_of(value);

	if (!label)
		return job_doc_error(doc, key, "%s '%.100s': a job gives QEMU one of its images, named '{label}'",
				     opt, value);
	free(*slot);
	*slot = label;
	return 0;
}

/* One option @opt (dashes normalised) with its value @v (NULL if none came). */
static int parse_option(struct job_doc *doc, const char *key, const char *opt, const char *v,
			struct job_qemu_args *q, bool files)
{
	bool file_opt = !strcmp(opt, "-kernel") || !strcmp(opt, "-initrd") ||
			!strcmp(opt, "-dtb") || !strcmp(opt, "-drive") || !strcmp(opt, "-cdrom") ||
			(!strncmp(opt, "-hd", 3) && opt[3] >= 'a' && opt[3] <= 'd' && !opt[4]);

	if (file_opt && !files)
		return job_doc_error(doc, key, "QEMU option '%s' in '%s': images are attached by their own image_arg",
				     opt, key);
	if (!strcmp(opt, "-append")) {
		free(q->append);
		q->append = strdup(v);
		q->append_line = job_doc_line(doc, key);
		return q->append ? 0 : job_doc_nomem(doc);
	}
	if (!strcmp(opt, "-m")) {
		q->memory_mib = parse_memory(v);
		q->memory_line = job_doc_line(doc, key);
		return q->memory_mib ? 0 : job_doc_error(doc, key, "-m '%.100s': give the memory as N (MiB), NM or NG", v);
	}
	if (!strcmp(opt, "-smp")) {
		q->cpus = parse_cpus(v);
		q->cpus_line = job_doc_line(doc, key);
		return q->cpus ? 0 : job_doc_error(doc, key, "-smp '%.100s': give the number of CPUs, N or cpus=N", v);
	}
	if (!strcmp(opt, "-kernel"))
		return parse_file(doc, key, opt, v, &q->kernel);
	if (!strcmp(opt, "-initrd"))
		return parse_file(doc, key, opt, v, &q->initrd);
	if (!strcmp(opt, "-dtb"))
		return parse_file(doc, key, opt, v, &q->dtb);
	if (!strcmp(opt, "-drive"))
		return parse_drive(doc, key, v, q);
	return parse_hd(doc, key, opt, v, q);
}

/* Whether @opt takes a value; -1 when it is not one a job may give. */
static int option_arity(const char *opt)
{
	static const char *const with_value[] = {
		"-append", "-m", "-smp", "-kernel", "-initrd", "-dtb", "-drive", "-hda", "-hdb",
		"-hdc", "-hdd", "-cdrom", NULL,
	};

	for (size_t i = 0; with_value[i]; i++)
		if (!strcmp(opt, with_value[i]))
			return 1;
	return strcmp(opt, "-nographic") ? -1 : 0;
}

int job_qemu_parse(struct job_doc *doc, const char *key, char *const *words,
		   struct job_qemu_args *q, bool files)
{
	size_t i, n = strv_length((char **)words);
	int r = 0, arity;

	for (i = 0; i < n; i++) {
		const char *opt = words[i][0] == '-' && words[i][1] == '-' ? words[i] + 1 : words[i];

		if (opt[0] != '-') {
			r = job_doc_error(doc, key, "'%.100s' in '%s' is not a QEMU option", words[i], key);
			continue;
		}
		arity = option_arity(opt);
		if (arity < 0) {
			r = job_doc_error(doc, key, "QEMU option '%.100s' is not allowed in jobs (allowed: " QEMU_ALLOWED "): the device type decides the rest of QEMU's command line",
					  words[i]);
			i += i + 1 < n && words[i + 1][0] != '-';	/* skip its value */
			continue;
		}
		if (!arity)
			continue;	/* -nographic: labd's QEMU never has a display */
		if (i + 1 == n) {
			r = job_doc_error(doc, key, "QEMU option '%s' in '%s' has no value", words[i], key);
			break;
		}
		if (parse_option(doc, key, opt, words[++i], q, files) < 0)
			r = -EINVAL;
	}
	return r;
}

/* context extra_options: a list of strings (each maybe several words) and numbers. */
static int context_words(struct job_doc *doc, const char *key, const json_t *v, char ***words)
{
	json_t *item;
	size_t i;
	char *text;
	int r = 0;

	if (!json_is_array(v))
		return job_doc_error(doc, key, "'%s' must be a list, not %s", key,
				     job_doc_type_name(v));
	json_array_foreach(v, i, item) {
		if (json_is_string(item)) {
			r = job_qemu_split(doc, key, json_string_value(item), words);
		} else if (json_is_integer(item)) {
			text = job_doc_scalar_str(item);
			r = text ? strv_consume(words, text) : job_doc_nomem(doc);
		} else {
			r = job_doc_error(doc, key, "the items of '%s' must be strings or numbers, not %s",
					  key, job_doc_type_name(item));
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int job_qemu_context(struct job_doc *doc, const char *key, const json_t *v,
		     struct job_qemu_args *q)
{
	char **words = NULL, *text;
	int r;

	if (!strcmp(key, "memory")) {
		text = json_is_string(v) || json_is_integer(v) ? job_doc_scalar_str(v) : NULL;
		q->memory_mib = text ? parse_memory(text) : 0;
		q->memory_line = job_doc_line(doc, key);
		free(text);
		return q->memory_mib ? 0 : job_doc_error(doc, key, "'memory' must be N (MiB), NM or NG");
	}
	r = context_words(doc, key, v, &words);
	if (!r)
		r = job_qemu_parse(doc, key, words, q, false);
	strv_free(words);
	return r;
}

/* ---- life cycle ---- */

void job_qemu_release(struct job_qemu_args *q)
{
	size_t i;

	for (i = 0; i < q->n_drives; i++) {
		free(q->drives[i].label);
		free(q->drives[i].format);
		free(q->drives[i].interface);
		free(q->drives[i].media);
	}
	free(q->drives);
	free(q->append);
	free(q->kernel);
	free(q->initrd);
	free(q->dtb);
	memset(q, 0, sizeof(*q));
}
