/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testdef.h -- a LAVA test definition, and the shell text labd types to run it
 *
 * A "Lava-Test Test Definition 1.0" document (inline in the job, or fetched
 * from a URL) becomes a struct testdef: its run and install steps, its
 * parameters (the definition's `params` overridden by the job's
 * `parameters`), its result pattern and fixupdict.
 *
 * labd needs no overlay image: it types everything into the board's shell,
 * one short command at a time, each answered by a prompt:
 *
 *  1. testdef_setup_commands(): `mkdir -p DIR/bin`, then the helpers
 *     lava-test-case, lava-test-set, lava-test-reference and lava-test-raise
 *     written as small sh scripts into DIR/bin (POSIX sh and busybox ash
 *     reject '-' in function names, and scripts also work from the test's
 *     own child scripts, as LAVA's do);
 *  2. testdef_script_commands(): DIR/<suite>.sh with PATH, TESTRUN_ID, the
 *     parameters, the install steps, the STARTRUN signal and the run steps;
 *  3. testdef_run_command(): `sh DIR/<suite>.sh; echo <ENDRUN signal>`, so
 *     the run ends with ENDRUN even when a step exits the script.
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

/** testdef_free() - accepts NULL; returns NULL. */
struct testdef *testdef_free(struct testdef *td);

/** testdef_setup_commands() - commands installing the helpers in @dir/bin (strv, caller frees). */
int testdef_setup_commands(const char *dir, char ***ret);

/** testdef_script_commands() - commands writing @dir/<suite>.sh; @uuid names the run. */
int testdef_script_commands(const struct testdef *td, const char *dir, const char *uuid,
			    char ***ret);

/** testdef_run_command() - the command running the script, then printing ENDRUN. */
char *testdef_run_command(const struct testdef *td, const char *dir, const char *uuid);

/** testdef_result() - @raw mapped through the fixupdict, else LAVA's own words, else unknown. */
const char *testdef_result(const struct testdef *td, const char *raw);

#endif
