/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz.h -- what the libFuzzer harnesses of tests/fuzz/ share
 *
 * Each fuzz-NAME.c defines LLVMFuzzerTestOneInput() (and maybe
 * LLVMFuzzerInitialize()) and feeds the input to one of labd's parsers of
 * outside input.  A harness checks what the parser promises (a document
 * built is valid in its own format, a line cut at any point parses the
 * same ...), and aborts when it does not; the sanitizers catch the rest.
 * Corpora: tests/fuzz/corpus/NAME/; tests/fuzz/run runs them.
 */
#ifndef LABD_FUZZ_H
#define LABD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken promise: say which and abort, so that libFuzzer keeps the input. */
#define FUZZ_ASSERT(cond)                                                           \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                    \
		}                                                                   \
	} while (0)

/**
 * fuzz_lines() - call @fn for each line of @data ('\n' ends a line, not
 * kept), numbered from 1, as labd's console splitter hands them on
 */
static inline void fuzz_lines(const uint8_t *data, size_t size,
			      void (*fn)(const char *line, size_t len, int64_t lineno, void *ud),
			      void *ud)
{
	size_t start = 0, i;
	int64_t n = 0;

	for (i = 0; i <= size; i++) {
		if (i < size && data[i] != '\n')
			continue;
		/* a copy, so that reading past the line is caught */
		char *line = malloc(i - start + 1);

		if (!line)
			return;
		__builtin_memcpy(line, data + start, i - start);
		line[i - start] = '\0';
		fn(line, i - start, ++n, ud);
		free(line);
		start = i + 1;
	}
}

#endif
