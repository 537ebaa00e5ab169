// SPDX-License-Identifier: GPL-2.0-or-later
/* lab.c -- questions about the lab as it is configured now */
#include "board/lab.h"

#include <string.h>

#include "board/board.h"
#include "config/config.h"

bool lab_has_board(const struct lab *l, const char *type, char *const *tags)
{
	struct board **boards;
	size_t i, n;

	boards = lab_boards(l, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(board_device(boards[i])->type_name, type) &&
		    board_has_tags(boards[i], tags))
			return true;
	return false;
}
