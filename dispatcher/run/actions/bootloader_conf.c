// SPDX-License-Identifier: GPL-2.0-or-later
/* bootloader_conf.c -- the dialects by bootloader, and the parameters a boot goes by */
#include "run/actions/bootloader.h"

#include "config/config.h"

static const struct bootloader_dialect *const dialects[BOOTLOADER_COUNT] = {
	[BOOTLOADER_UBOOT] = &dialect_uboot,
	[BOOTLOADER_BAREBOX] = &dialect_barebox,
	[BOOTLOADER_GRUB] = &dialect_grub,
	[BOOTLOADER_GRUB_EFI] = &dialect_grub_efi,
	[BOOTLOADER_IPXE] = &dialect_ipxe,
	[BOOTLOADER_DEPTHCHARGE] = &dialect_depthcharge,
	[BOOTLOADER_UEFI_MENU] = &dialect_uefi_menu,
};

const struct bootloader_dialect *bootloader_dialect(int b)
{
	return b >= 0 && b < BOOTLOADER_COUNT ? dialects[b] : NULL;
}

/* The job's context value @key, if it is a non-empty string. */
static const char *context_str(const json_t *context, const char *key)
{
	const char *v = json_string_value(json_object_get(context, key));

	return v && *v ? v : NULL;
}

static const char *pick(const char *job, const char *type, const char *dialect)
{
	return job ? job : type ? type : dialect;
}

void bootloader_conf_resolve(const struct bootloader_dialect *d, const struct bootloader_params *p,
			     const json_t *context, struct bootloader_conf *ret)
{
	*ret = (struct bootloader_conf){
		.dialect = d,
		.interrupt_prompt = pick(context_str(context, "interrupt_prompt"),
					 p->interrupt_prompt, d->interrupt_prompt),
		.interrupt_char = pick(context_str(context, "interrupt_char"), p->interrupt_char,
				       d->interrupt_char),
		.interrupt_newline = p->interrupt_newline >= 0 ? p->interrupt_newline
							       : d->interrupt_newline,
		.needs_interrupt = p->needs_interrupt >= 0 ? p->needs_interrupt : d->needs_interrupt,
		.bootloader_prompt = pick(context_str(context, "bootloader_prompt"),
					  p->bootloader_prompt, d->bootloader_prompt),
		.char_delay = p->char_delay,
		.interrupt_delay = p->interrupt_delay,
		.final_message = pick(NULL, p->final_message, d->final_message),
		.error_messages = p->error_messages ? p->error_messages
						    : (char *const *)d->error_messages,
		.job_error_messages = p->job_error_messages ? p->job_error_messages
							    : (char *const *)d->job_error_messages,
		.command_sets = &p->command_sets,
		.default_commands = p->default_commands,
		.menu_item = pick(NULL, p->menu_item, d->menu_item),
		.menu_down = pick(NULL, p->menu_down, d->menu_down),
		.menu_select = pick(NULL, p->menu_select, d->menu_select),
	};
	if (ret->final_message && !*ret->final_message)
		ret->final_message = NULL;	/* the type says: none */
}
