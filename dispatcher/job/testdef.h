/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testdef.h -- a LAVA test definition, and the shell text labd types to run it
 *
 * A "Lava-Test Test Definition 1.0" document (inline in the job, or fetched
 * from a URL) becomes a struct testdef: its run and install steps, its
 * parameters (the definition's `params` overridden by the job's
 * `parameters`), its result pattern and fixupdict.
 *
 * Definitions reach the board in one of two ways.  A job whose definitions
 * are all inline or from URLs needs no overlay: labd types everything into
 * the board's shell, one short command at a time, each answered by a prompt:
 *
 *  1. testdef_setup_commands(): `mkdir -p DIR/bin`, then the helpers
 *     (testdef_helpers(): labd-signal, lava-test-case, lava-test-set,
 *     lava-test-reference, lava-test-raise) written as small sh scripts into
 *     DIR/bin (POSIX sh and busybox ash reject '-' in function names, and
 *     scripts also work from the test's own child scripts, as LAVA's do);
 *  2. testdef_script_commands(): DIR/<suite>.sh with PATH, TESTRUN_ID, the
 *     parameters, the install section, the STARTRUN signal and the run steps;
 *  3. testdef_run_command(): `sh DIR/<suite>.sh; echo <ENDRUN signal>`, so
 *     the run ends with ENDRUN even when a step exits the script.
 *
 * Otherwise (definitions from git, whose repository trees go along, or a
 * transfer_overlay) the same helpers and scripts (testdef_script_text()) are
 * files of the job's overlay (overlay/overlay_build.h), in LAVA's layout:
 * /lava-<job>/bin, /lava-<job>/tests/<suite>/run.sh, the steps running in
 * /lava-<job>/tests/<suite>.
 *
 * Files are written with `printf '%s\n' 'line' ... > FILE` (then >>), every
 * line single-quoted, no command longer than TESTDEF_MAX_COMMAND bytes and
 * no TAB typed (line editors complete on TAB: TABs in steps become blanks).
 * No typed text contains "<LAVA_SIGNAL_" itself (the markers are written as
 * "<LAVA_SIGNAL""_..."), so the shell's echo of the input is never taken for
 * a signal; the scanner only believes what the board prints.
 */
#ifndef LABD_TESTDEF_H
#define LABD_TESTDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/kv.h"

#define TESTDEF_MAX_COMMAND 512	/* bytes of one typed command */
#define TESTDEF_MAX_STEPS 1000	/* install and run steps of one definition */
#define TESTDEF_MAX_SIZE (1024 * 1024)	/* bytes of a fetched definition */
#define TESTDEF_FORMAT "Lava-Test Test Definition 1.0"

struct job_testdef;

struct testdef {
	char *suite;		/* result suite: "<index>_<name in the job>" */
	char *name;		/* metadata.name */
	char **install;		/* strv: install.steps */
	char **deps;		/* strv: install.deps, installed with the os's package manager */
	unsigned skip_install;	/* TESTDEF_SKIP_* (job.h): parts of install not run */
	bool kmsg;		/* lava-signal: kmsg */
	char **steps;		/* strv: run.steps */
	struct kv params;	/* exported before the steps */
	char *pattern;		/* parse.pattern (PCRE2, Python-style groups) or NULL */
	struct kv fixupdict;	/* raw result -> pass, fail, skip, unknown */
	char **expected;	/* strv: test cases the job expects (borrowed copy) */
};

/**
 * testdef_from_json() - a definition from its document
 * @doc: the "Lava-Test Test Definition 1.0" mapping
 * @jt: the job's entry (name, parameters, expected)
 * @index: position among all the job's test definitions (suite "<index>_<name>")
 * @ret: the definition, freed with testdef_free()
 * @err: a one-line reason when the document is not a usable definition
 *
 * Returns 0, -EINVAL (see @err) or -ENOMEM.
 */
int testdef_from_json(const json_t *doc, const struct job_testdef *jt, unsigned index,
		      struct testdef **ret, char *err, size_t errlen);

/**
 * testdef_parse_yaml() - a fetched definition's YAML text into a JSON tree
 * (the job parser's YAML front end); @name names it in @err.
 * Returns 0, -EINVAL (see @err), -E2BIG above TESTDEF_MAX_SIZE or -ENOMEM.
 */
int testdef_parse_yaml(const char *text, size_t len, const char *name, json_t **ret, char *err,
		       size_t errlen);

/* labd's helper scripts (testdef_helpers.c): labd-signal, lava-test-case, ... */
struct testdef_helper {
	const char *name;		/* the file name in <dir>/bin */
	const char *const *lines;	/* the script, NULL-terminated */
};

/** testdef_helpers() - the helper scripts, *@n of them (static). */
const struct testdef_helper *testdef_helpers(size_t *n);

/** testdef_helper_text() - a helper's script as text, each line ending '\n' (caller frees). */
char *testdef_helper_text(const struct testdef_helper *h);

/** testdef_free() - accepts NULL; returns NULL. */
struct testdef *testdef_free(struct testdef *td);

/** testdef_setup_commands() - commands installing the helpers in @dir/bin (strv, caller frees). */
int testdef_setup_commands(const char *dir, char ***ret);

/** Where and how a definition's script runs. */
struct testdef_script {
	const char *dir;	/* the helpers are in <dir>/bin */
	const char *testdir;	/* the steps run there (a git definition's tree), or NULL */
	const char *uuid;	/* names the run in STARTRUN and ENDRUN */
	const char *os;		/* the deploy's os: how install.deps are installed; or NULL */
	const char *storage;	/* the board's storage_info as testdef_storage_info() gives
				 * it (lava-target-storage reads it), or NULL */
};

struct kv;

/**
 * testdef_storage_info() - a board's storage_info (kind -> device path) as the
 * scripts export it in LAVA_STORAGE_INFO, "SATA=/dev/sda USB=/dev/sdb" (caller
 * frees), or NULL when it has none (or on ENOMEM: check @storage_info->n).
 */
char *testdef_storage_info(const struct kv *storage_info);

/** testdef_script_commands() - commands writing <dir>/<suite>.sh (strv, caller frees). */
int testdef_script_commands(const struct testdef *td, const struct testdef_script *sc,
			    char ***ret);

/** testdef_script_text() - the same script as a file's text, for an overlay (caller frees). */
char *testdef_script_text(const struct testdef *td, const struct testdef_script *sc);

/**
 * testdef_file_commands() - commands writing @lines into the file @path on the
 * board, typed one per prompt (the rules above); *@ret is a strv to free.
 */
int testdef_file_commands(const char *path, const char *const *lines, char ***ret);

/**
 * testdef_quote() - @len bytes of @s as one single-quoted sh word, typeable:
 * a TAB becomes a blank, a signal marker is split ("<LAVA_SIGNAL''_").
 */
struct strbuf;
void testdef_quote(struct strbuf *sb, const char *s, size_t len);

/** testdef_run_command() - the command running @script, then printing ENDRUN. */
char *testdef_run_command(const struct testdef *td, const char *script, const char *uuid);

/** testdef_result() - @raw mapped through the fixupdict, else LAVA's own words, else unknown. */
const char *testdef_result(const struct testdef *td, const char *raw);

#endif
