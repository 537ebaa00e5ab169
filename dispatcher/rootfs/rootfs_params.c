// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rootfs_params.c -- labd.conf's `nfs` group
 *
 *	nfs = {
 *		export_dir = "/srv/nfs/labd";	# required: the NFS server exports it
 *		export_path = "/labd";		# as boards mount it (default export_dir)
 *		server_ip = "192.168.10.1";	# {NFS_SERVER_IP} (default: server_ip)
 *		mount_options = "port=2049";	# {NFS_MOUNT_OPTIONS} (",port=2049")
 *		max_size = "100G";		# file data of all trees; default no limit
 *		when_full = "wait";		# or "fail"
 *	};
 */
#include "rootfs/rootfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/diag.h"

static const char *const nfs_keys[] = {
	"export_dir", "export_path", "server_ip", "mount_options", "max_size", "when_full", NULL
};

void rootfs_params_release(struct rootfs_params *p)
{
	free(p->export_dir);
	free(p->export_path);
	free(p->server_ip);
	free(p->mount_options);
	memset(p, 0, sizeof(*p));
}

static int dup_or_null(const char *s, char **ret)
{
	*ret = s ? strdup(s) : NULL;
	return s && !*ret ? -ENOMEM : 0;
}

int rootfs_params_copy(struct rootfs_params *dst, const struct rootfs_params *src)
{
	rootfs_params_release(dst);
	dst->max_size = src->max_size;
	dst->fail_when_full = src->fail_when_full;
	if (dup_or_null(src->export_dir, &dst->export_dir) < 0 ||
	    dup_or_null(src->export_path, &dst->export_path) < 0 ||
	    dup_or_null(src->server_ip, &dst->server_ip) < 0 ||
	    dup_or_null(src->mount_options, &dst->mount_options) < 0) {
		rootfs_params_release(dst);
		return -ENOMEM;
	}
	return 0;
}

/* The optional string @key, not empty, copied into *@ret. */
static int get_text(const config_setting_t *g, const char *key, char **ret, struct diag *diag)
{
	const char *v;
	int r = cfg_get_string(g, key, false, &v, diag);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	if (!*v)
		return diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, key)),
				"'%s' must not be empty", key);
	return dup_or_null(v, ret);
}

/* export_dir: required, absolute once joined with labd.conf's directory, no trailing '/'. */
static int get_export_dir(const config_setting_t *g, const char *conf_file,
			  struct rootfs_params *p, struct diag *diag)
{
	const char *v, *slash = strrchr(conf_file, '/');
	int dir_len = slash ? (int)(slash - conf_file) : 1;
	size_t n;
	int r = cfg_get_string(g, "export_dir", true, &v, diag);

	if (r < 0)
		return r;
	if (!*v || !strcmp(v, "/"))
		return diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, "export_dir")),
				"'export_dir' must name a directory of its own, not '%s'", v);
	if (v[0] == '/' ? !(p->export_dir = strdup(v)) :
	    asprintf(&p->export_dir, "%.*s/%s", dir_len, slash ? conf_file : ".", v) < 0) {
		p->export_dir = NULL;
		return -ENOMEM;
	}
	n = strlen(p->export_dir);
	while (n > 1 && p->export_dir[n - 1] == '/')
		p->export_dir[--n] = '\0';
	return 0;
}

static int check_ip(const config_setting_t *g, const char *ip, struct diag *diag)
{
	unsigned char addr[sizeof(struct in6_addr)];

	if (!ip || inet_pton(AF_INET, ip, addr) == 1 || inet_pton(AF_INET6, ip, addr) == 1)
		return 0;
	return diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, "server_ip")),
			"'server_ip' must be an IPv4 or IPv6 address, not '%s'", ip);
}

static int get_when_full(const config_setting_t *g, struct rootfs_params *p, struct diag *diag)
{
	const char *v;

	if (cfg_get_string(g, "when_full", false, &v, diag) < 0)
		return 0;
	if (!strcmp(v, "wait") || !strcmp(v, "fail")) {
		p->fail_when_full = !strcmp(v, "fail");
		return 0;
	}
	return diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, "when_full")),
			"'when_full' must be \"wait\" or \"fail\", not '%s'", v);
}

int rootfs_params_parse(const config_setting_t *g, const char *conf_file,
			struct rootfs_params *p, struct diag *diag)
{
	size_t n0 = diag->n;

	memset(p, 0, sizeof(*p));
	if (!g)
		return 0;
	if (!config_setting_is_group(g))
		return diag_add(diag, cfg_file(g), cfg_line(g), "'nfs' must be a group, not %s",
				cfg_type_name(g));
	cfg_check_keys(g, nfs_keys, diag);
	if (get_export_dir(g, conf_file, p, diag) == -ENOMEM ||
	    get_text(g, "export_path", &p->export_path, diag) == -ENOMEM ||
	    get_text(g, "server_ip", &p->server_ip, diag) == -ENOMEM ||
	    get_text(g, "mount_options", &p->mount_options, diag) == -ENOMEM)
		return -ENOMEM;
	check_ip(g, p->server_ip, diag);
	cfg_get_size(g, "max_size", &p->max_size, diag);
	get_when_full(g, p, diag);
	if (p->export_path && p->export_path[0] != '/')
		diag_add(diag, cfg_file(g), cfg_line(config_setting_get_member(g, "export_path")),
			 "'export_path' must be an absolute path, as boards mount it");
	if (!p->export_path && p->export_dir && !(p->export_path = strdup(p->export_dir)))
		return -ENOMEM;
	return diag->n != n0 ? -EINVAL : 0;
}

int rootfs_params_check_dir(const config_setting_t *g, const struct rootfs_params *p,
			    struct diag *diag)
{
	const config_setting_t *s = g ? config_setting_get_member(g, "export_dir") : NULL;
	struct stat st;
	int err = 0;

	if (!p->export_dir)
		return 0;
	if (stat(p->export_dir, &st) < 0)
		err = -errno;
	else if (!S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	else if (access(p->export_dir, W_OK | X_OK) < 0)
		err = -errno;
	if (!err)
		return 0;
	diag_add(diag, cfg_file(s), cfg_line(s), "the NFS export directory '%s' %s", p->export_dir,
		 err == -ENOENT ? "does not exist: create it, and export it from the NFS server" :
		 err == -ENOTDIR ? "is not a directory" :
		 err == -EACCES ? "is not writable by labd" : strerror(-err));
	return err;
}
