// SPDX-License-Identifier: GPL-2.0
/*
 * sdrctl: show and configure sdr devices, flows and defaults, in the style
 * of iproute2's rdma tool.  Everything but "caps" comes from sysfs:
 *
 *   /sys/class/sdr/<ibdev>/{ibdev,port,gid,gid_index,mtu,nr_flows}
 *   /sys/class/sdr/<ibdev>/{counters,drops}/<name>
 *   /sys/class/sdr/<ibdev>/flows/<id>/<attr>, .../flows/<id>/counters/<name>
 *   /sys/module/sdr/parameters/<name>
 *
 * Attribute and counter names are read from the directories, never from a
 * list compiled in here, so new counters, drop reasons, parameters and
 * policies show up without a new sdrctl.  Known names only fix the order.
 * "caps" asks /dev/sdr (SDR_IOC_QUERY, through libsdr's sdr_query()) what
 * the module offers; the policies it runs also name the choices in the
 * usage text and in the errors of "set flow".
 *
 * SDR_SYSFS=DIR makes sdrctl read DIR/class/sdr and DIR/module/sdr instead
 * of /sys (for tests on a fake tree).
 *
 * Exit status: 0 ok, 1 the operation failed, 2 usage error.
 * See tools/man/sdrctl.8 and Documentation/sdrctl.rst.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libsdr.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char *prog = "sdrctl";
static char class_dir[512];	/* .../class/sdr */
static char param_dir[512];	/* .../module/sdr/parameters */
static char module_dir[512];	/* .../module/sdr */
static bool opt_json, opt_pretty, opt_stats;

/* ---- small helpers ---- */

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Read a sysfs file into buf without the trailing newline; -errno. */
static int read_attr(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* One write() of the whole value: sysfs stores parse a single buffer. */
static int write_attr(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	if (close(fd) < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_integer(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A list of directory entry names. */
struct names {
	char **v;
	int n;
};

static void names_free(struct names *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = *(char * const *)a, *y = *(char * const *)b;

	/* Numeric names (flow ids) in numeric order, the rest by strcmp. */
	if (is_integer(x) && is_integer(y)) {
		long long u = atoll(x), v = atoll(y);

		return (u > v) - (u < v);
	}
	return strcmp(x, y);
}

enum { WANT_FILES = 1, WANT_DIRS = 2 };

/* Entries of dir that are regular files or directories, sorted; -errno. */
static int list_dir(const char *dir, int want, struct names *out)
{
	struct dirent *de;
	char path[1024];
	DIR *d;

	out->v = NULL;
	out->n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		bool ok;
		char **v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ok = ((want & WANT_FILES) && is_file(path)) ||
		     ((want & WANT_DIRS) && is_dir(path));
		if (!ok)
			continue;
		v = realloc(out->v, (out->n + 1) * sizeof(*v));
		if (!v)
			break;
		out->v = v;
		out->v[out->n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(out->v, out->n, sizeof(*out->v), cmp_name);
	return 0;
}

/* Put the names listed in order[] first (those present), the rest after. */
static void names_order(struct names *l, const char *const *order)
{
	int k = 0;

	for (; *order; order++) {
		for (int i = k; i < l->n; i++) {
			if (strcmp(l->v[i], *order))
				continue;
			char *t = l->v[i];

			memmove(&l->v[k + 1], &l->v[k], (i - k) * sizeof(*l->v));
			l->v[k++] = t;
			break;
		}
	}
}

/* ---- JSON output, like rdma -j: one array, numbers as numbers ---- */

static int j_depth;
static bool j_first[32];

static void j_indent(void)
{
	if (!opt_pretty)
		return;
	putchar('\n');
	for (int i = 0; i < j_depth; i++)
		fputs("    ", stdout);
}

static void j_sep(void)
{
	if (!j_first[j_depth])
		putchar(',');
	j_first[j_depth] = false;
	if (j_depth > 0)
		j_indent();
}

static void j_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void j_key(const char *k)
{
	j_sep();
	j_string(k);
	putchar(':');
	if (opt_pretty)
		putchar(' ');
}

static void j_open(char c)
{
	putchar(c);
	j_first[++j_depth] = true;
}

static void j_close(char c)
{
	bool empty = j_first[j_depth];

	j_depth--;
	if (!empty)
		j_indent();
	putchar(c);
	if (j_depth == 0)
		putchar('\n');
}

static void j_begin_elem(void)
{
	j_sep();
}

/* A sysfs value: a number if it is one, else a string. */
static void j_value(const char *v)
{
	if (is_integer(v))
		fputs(v, stdout);
	else
		j_string(v);
}

static void j_kv(const char *k, const char *v)
{
	j_key(k);
	j_value(v);
}

/* ---- sysfs paths ---- */

static void setup_paths(void)
{
	const char *root = getenv("SDR_SYSFS");

	if (!root || !*root)
		root = "/sys";
	snprintf(class_dir, sizeof(class_dir), "%s/class/sdr", root);
	snprintf(module_dir, sizeof(module_dir), "%s/module/sdr", root);
	snprintf(param_dir, sizeof(param_dir), "%s/module/sdr/parameters", root);
}

static int need_module(void)
{
	if (is_dir(class_dir))
		return 0;
	err("sdr.ko is not loaded (%s is missing)", class_dir);
	return -1;
}

/* The devices to show: all, or the one named; -1 on error (printed). */
static int select_devs(const char *want, struct names *devs)
{
	char path[1024];

	if (need_module())
		return -1;
	if (want) {
		snprintf(path, sizeof(path), "%s/%s", class_dir, want);
		if (!is_dir(path)) {
			err("device %s: not bound to sdr (no %s)", want, path);
			return -1;
		}
		devs->v = malloc(sizeof(*devs->v));
		devs->v[0] = strdup(want);
		devs->n = 1;
		return 0;
	}
	/* /sys/class entries are symlinks to directories: stat follows them. */
	if (list_dir(class_dir, WANT_DIRS, devs) < 0) {
		err("%s: %s", class_dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int cmd_set_flow(int argc, char **argv);

/*
 * The policies the loaded module runs, joined by sep, into buf; false
 * (and buf empty) when it cannot say (not loaded, or too old for
 * SDR_IOC_QUERY).
 */
static bool run_policies(const char *sep, char *buf, size_t len)
{
	struct sdr_caps caps;

	buf[0] = '\0';
	if (sdr_query(NULL, &caps))
		return false;
	return sdr_policy_list(caps.policies, sep, buf, len) >= 0;
}

/* ---- sdrctl caps: what the module offers (SDR_IOC_QUERY) ---- */

static const struct {
	uint64_t bit;
	const char *name;
} feature_names[] = {
	{ SDR_FEATURE_AUTH, "auth" },
	{ SDR_FEATURE_MULTIPATH, "multipath" },
	{ SDR_FEATURE_RAILS, "rails" },
	{ SDR_FEATURE_GROUPS, "groups" },
	{ SDR_FEATURE_MR, "mr" },
	{ SDR_FEATURE_KEX, "kex" },
	{ SDR_FEATURE_AEAD, "aead" },
};

/* A mask as a list of names: policies by id, features by feature_names. */
static void caps_list(const char *key, uint64_t mask, bool features)
{
	char name[32];
	int n = 0;

	if (opt_json) {
		j_key(key);
		j_open('[');
	} else {
		printf(" %s ", key);
	}
	for (int i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		snprintf(name, sizeof(name), "%d", i);
		if (!features) {
			sdr_policy_list(1ULL << i, "", name, sizeof(name));
		} else {
			for (size_t f = 0; f < sizeof(feature_names) /
					       sizeof(feature_names[0]); f++)
				if (feature_names[f].bit == 1ULL << i)
					snprintf(name, sizeof(name), "%s",
						 feature_names[f].name);
		}
		if (opt_json) {
			j_begin_elem();
			j_string(name);
		} else {
			printf("%s%s", n ? "," : "", name);
		}
		n++;
	}
	if (opt_json)
		j_close(']');
	else if (!n)
		putchar('-');
}

static void caps_num(const char *key, uint64_t v)
{
	char val[32];

	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	if (opt_json)
		j_kv(key, val);
	else
		printf(" %s %s", key, val);
}

static int cmd_caps(int argc, char **argv)
{
	struct sdr_caps caps;
	int ret;

	if (argc > 0 && !strcmp(argv[0], "show")) {
		argc--;
		argv++;
	}
	if (argc) {
		err("caps: unexpected '%s' (usage: sdrctl caps [show])", argv[0]);
		return EXIT_USAGE;
	}
	ret = sdr_query(NULL, &caps);
	if (ret) {
		if (ret == -ENOENT)
			err("sdr.ko is not loaded (/dev/sdr is missing)");
		else if (ret == -ENOTTY)
			err("caps: the loaded sdr.ko predates SDR_IOC_QUERY");
		else
			err("caps: /dev/sdr: %s", strerror(-ret));
		return EXIT_FAIL;
	}
	if (opt_json) {
		j_open('[');
		j_begin_elem();
		j_open('{');
	} else {
		fputs("sdr:", stdout);
	}
	caps_num("abi_version", caps.abi_version);
	caps_list("policies", caps.policies, false);
	caps_num("policy_nr", caps.policy_nr);
	caps_list("features", caps.features, true);
	caps_num("paths_max", caps.paths_max);
	caps_num("ec_max_k", caps.ec_max_k);
	caps_num("ec_max_m", caps.ec_max_m);
	caps_num("max_msg_size", caps.max_msg_size);
	caps_num("max_msgs", caps.max_msgs);
	if (opt_json) {
		j_close('}');
		j_close(']');
	} else {
		putchar('\n');
	}
	return EXIT_OK;
}

/* ---- sdrctl dev ---- */

static const char *const dev_order[] = {
	"ibdev", "port", "gid", "gid_index", "mtu", "nr_flows", NULL
};

static int cmd_dev(int argc, char **argv)
{
	struct names devs;
	const char *want = NULL;

	if (argc > 0 && (!strcmp(argv[0], "show") || !strcmp(argv[0], "list"))) {
		argc--;
		argv++;
	}
	if (argc == 1)
		want = argv[0];
	else if (argc == 2 && !strcmp(argv[0], "dev"))
		want = argv[1];
	else if (argc) {
		err("dev: unexpected '%s' (usage: sdrctl dev [show] [DEV])", argv[0]);
		return EXIT_USAGE;
	}
	if (select_devs(want, &devs))
		return EXIT_FAIL;
	if (opt_json)
		j_open('[');
	for (int i = 0; i < devs.n; i++) {
		char dir[1024], path[1200], val[256];
		struct names attrs;

		snprintf(dir, sizeof(dir), "%s/%s", class_dir, devs.v[i]);
		list_dir(dir, WANT_FILES, &attrs);
		names_order(&attrs, dev_order);
		if (opt_json) {
			j_begin_elem();
			j_open('{');
			j_kv("dev", devs.v[i]);
		} else {
			printf("%s:", devs.v[i]);
		}
		for (int a = 0; a < attrs.n; a++) {
			const char *name = attrs.v[a];
			bool known = false;

			for (const char *const *o = dev_order; *o; o++)
				known |= !strcmp(*o, name);
			/* Device-model files (uevent, dev) are not ours. */
			if (!known && (!strcmp(name, "uevent") || !strcmp(name, "dev")))
				continue;
			if (!strcmp(name, "ibdev"))
				continue;	/* = the directory name */
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			if (read_attr(path, val, sizeof(val)) < 0)
				continue;
			/* Before the flows/ directory this file was "flows". */
			if (!strcmp(name, "flows"))
				name = "nr_flows";
			if (opt_json)
				j_kv(name, val);
			else
				printf(" %s %s", name, val);
		}
		if (opt_json)
			j_close('}');
		else
			putchar('\n');
		names_free(&attrs);
	}
	if (opt_json)
		j_close(']');
	names_free(&devs);
	return EXIT_OK;
}

/* ---- flows ---- */

static const char *const flow_order[] = {
	"owner_pid", "owner_uid", "policy", "policies", "ec_geometry", "state",
	"auth", "kex", "peer", "mtu", "payload",
	"chunk_size", "max_msg_size", "max_msgs", "sends_inflight",
	"recvs_posted", "paths", NULL
};

static const char *const flow_counter_order[] = {
	"tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "rx_dropped",
	"retransmits", "timeouts", "acks_tx", "acks_rx", "nacks_tx", "nacks_rx",
	"rnr_tx", "rnr_rx", "spurious_retx", "parity_sent", "parity_received",
	"pkts_recovered", "decodes", "msgs_sent", "msgs_received",
	"msgs_failed", NULL
};

/* Counters sdrctl flow shows in text mode (JSON has them all). */
static const char *const flow_key_counters[] = {
	"tx_bytes", "rx_bytes", "retransmits", "timeouts", "msgs_sent",
	"msgs_received", "msgs_failed", NULL
};

static const char *const dev_counter_order[] = {
	"tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "tx_errors",
	"rx_errors", "qp_recoveries", "ctrl_dropped", "retransmits", "timeouts",
	"spurious_retx", "acks_tx", "acks_rx", "nacks_tx", "nacks_rx",
	"rnr_tx", "rnr_rx", "parity_sent", "parity_received",
	"pkts_recovered", "decodes", "msgs_sent", "msgs_received",
	"msgs_failed", NULL
};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

/*
 * Print every file of dir as "name": value (JSON) or " name value" (text),
 * known names first.  In text mode only those in text_only when it is set.
 */
static void show_values(const char *dir, const char *const *order,
			const char *const *text_only, const char *indent)
{
	char path[1200], val[256];
	struct names l;
	int shown = 0;

	if (list_dir(dir, WANT_FILES, &l) < 0)
		return;
	names_order(&l, order);
	for (int i = 0; i < l.n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, l.v[i]);
		if (read_attr(path, val, sizeof(val)) < 0)
			continue;
		if (opt_json) {
			j_kv(l.v[i], val);
			continue;
		}
		if (text_only && !in_list(text_only, l.v[i]))
			continue;
		/* Wrap long lines at about 6 pairs. */
		if (indent && shown && shown % 6 == 0)
			printf("\n%s", indent);
		printf("%s%s %s", shown || !indent ? " " : "", l.v[i], val);
		shown++;
	}
	names_free(&l);
}

/* ec_geometry "K M": "ec_k" and "ec_m" */
static void j_ec(const char *v)
{
	char k[16], m[16];

	if (sscanf(v, "%15s %15s", k, m) != 2) {
		j_kv("ec_geometry", v);
		return;
	}
	j_kv("ec_k", k);
	j_kv("ec_m", m);
}

static void print_ec(const char *v)
{
	unsigned int k, m;

	if (sscanf(v, "%u %u", &k, &m) == 2)
		printf(" ec_k %u ec_m %u", k, m);
	else
		printf(" ec_geometry %s", v);
}

/* "<gid> <qpn> <flow_id>" or "-". */
static void j_peer(const char *v)
{
	char gid[128];
	char qpn[32], id[32];

	j_key("peer");
	if (sscanf(v, "%127s %31s %31s", gid, qpn, id) != 3) {
		if (!strcmp(v, "-") || !*v)
			fputs("null", stdout);
		else
			j_string(v);
		return;
	}
	j_open('{');
	j_kv("gid", gid);
	/* A qpn may come as hex: keep it a number either way. */
	if (!is_integer(qpn)) {
		char *end;
		unsigned long q = strtoul(qpn, &end, 0);

		if (!*end)
			snprintf(qpn, sizeof(qpn), "%lu", q);
	}
	j_kv("qpn", qpn);
	j_kv("flow_id", id);
	j_close('}');
}

static void print_peer(const char *v)
{
	char gid[128], qpn[32], id[32];

	if (sscanf(v, "%127s %31s %31s", gid, qpn, id) == 3)
		printf(" peer %s qpn %s flow %s", gid, qpn, id);
	else
		printf(" peer %s", v);
}

/*
 * The values in directory @path, in @order (NULL first: as listed), as
 * object @name in JSON, a line "    name: ..." in text.
 */
static void show_group(const char *name, const char *path,
		       const char *const *order)
{
	if (opt_json) {
		j_key(name);
		j_open('{');
		show_values(path, order, NULL, NULL);
		j_close('}');
		return;
	}
	printf("    %s: ", name);
	show_values(path, order, NULL, "    ");
	putchar('\n');
}

/*
 * What each policy the flow readied shows of it (flows/<id>/<policy>/),
 * in the order of its "policies" file: "policy_stats" in JSON, one line
 * per policy in text.
 */
static void show_policy_stats(const char *dir)
{
	static const char *const as_listed[] = { NULL };
	char path[1200], pols[256], *save = NULL, *p;

	snprintf(path, sizeof(path), "%s/policies", dir);
	if (read_attr(path, pols, sizeof(pols)) < 0)
		return;
	if (opt_json) {
		j_key("policy_stats");
		j_open('{');
	}
	for (p = strtok_r(pols, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, p);
		if (is_dir(path))
			show_group(p, path, as_listed);
	}
	if (opt_json)
		j_close('}');
}

/*
 * An AUTO flow: what AUTO chose and why (flows/<id>/auto/): "auto" in
 * JSON, a line in text.
 */
static void show_auto(const char *dir)
{
	static const char *const order[] = {
		"choice", "loss_ppm", "rtt_us", "tinj_ns", "msg_pkts",
		"inflight", "cost_sr_us", "cost_adaptive_us", "cost_ec_us",
		"decisions", "switches", "code_ns", NULL,
	};
	char path[1200], pol[32];

	snprintf(path, sizeof(path), "%s/policy", dir);
	if (read_attr(path, pol, sizeof(pol)) < 0 || strcmp(pol, "auto"))
		return;
	snprintf(path, sizeof(path), "%s/auto", dir);
	if (is_dir(path))
		show_group("auto", path, order);
}

/*
 * The flow's paths (flows/<id>/path/: one value per path in each file):
 * "path" in JSON, a line in text when the flow has several.
 */
static void show_paths(const char *dir)
{
	static const char *const order[] = {
		"qpn", "state", "inflight", "tx_packets", "untracked", "acked",
		"lost", "loss_pct", "srtt_us", "rto_us", "drains", "restores",
		"peer_qpns", NULL,
	};
	char path[1200], n[32];

	snprintf(path, sizeof(path), "%s/paths", dir);
	if (!opt_json && (read_attr(path, n, sizeof(n)) < 0 || !strcmp(n, "1")))
		return;
	snprintf(path, sizeof(path), "%s/path", dir);
	if (is_dir(path))
		show_group("path", path, order);
}

/* One flow: 0, or -ENOENT when it went away meanwhile. */
static int show_flow(const char *dev, const char *id, bool all_counters)
{
	char dir[1024], path[1200], val[256], cdir[1100];
	struct names attrs;

	snprintf(dir, sizeof(dir), "%s/%s/flows/%s", class_dir, dev, id);
	if (list_dir(dir, WANT_FILES, &attrs) < 0)
		return -ENOENT;
	names_order(&attrs, flow_order);
	snprintf(cdir, sizeof(cdir), "%s/counters", dir);

	if (opt_json) {
		j_begin_elem();
		j_open('{');
		j_kv("dev", dev);
		j_kv("id", id);
		for (int i = 0; i < attrs.n; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, attrs.v[i]);
			if (read_attr(path, val, sizeof(val)) < 0)
				continue;
			if (!strcmp(attrs.v[i], "peer"))
				j_peer(val);
			else if (!strcmp(attrs.v[i], "ec_geometry"))
				j_ec(val);
			else
				j_kv(attrs.v[i], val);
		}
		j_key("counters");
		j_open('{');
		show_values(cdir, flow_counter_order, NULL, NULL);
		j_close('}');
		show_auto(dir);
		show_paths(dir);
		show_policy_stats(dir);
		j_close('}');
		names_free(&attrs);
		return 0;
	}

	printf("%s/%s:", dev, id);
	for (int i = 0; i < attrs.n; i++) {
		const char *n = attrs.v[i];

		snprintf(path, sizeof(path), "%s/%s", dir, n);
		if (read_attr(path, val, sizeof(val)) < 0)
			continue;
		if (!strcmp(n, "owner_pid"))
			printf(" pid %s", val);
		else if (!strcmp(n, "owner_uid"))
			printf(" uid %s", val);
		else if (!strcmp(n, "peer"))
			print_peer(val);
		else if (!strcmp(n, "ec_geometry"))
			print_ec(val);
		else if (!strcmp(n, "sends_inflight"))
			printf(" sends %s", val);
		else if (!strcmp(n, "recvs_posted"))
			printf(" recvs %s", val);
		else if (in_list(flow_order, n) && strcmp(n, "payload") &&
			 strcmp(n, "max_msg_size"))
			printf(" %s %s", n, val);
	}
	putchar('\n');
	if (is_dir(cdir)) {
		fputs("    ", stdout);
		show_values(cdir, flow_counter_order,
			    all_counters ? NULL : flow_key_counters, "    ");
		putchar('\n');
	}
	show_auto(dir);
	show_paths(dir);
	if (all_counters)
		show_policy_stats(dir);
	names_free(&attrs);
	return 0;
}

static int cmd_flow(int argc, char **argv)
{
	const char *want_dev = NULL, *want_id = NULL;
	struct names devs;
	int found = 0;

	if (argc > 0 && (!strcmp(argv[0], "show") || !strcmp(argv[0], "list"))) {
		argc--;
		argv++;
	} else if (argc > 0 && !strcmp(argv[0], "set")) {
		/* sdrctl flow set DEV/ID ... = sdrctl set flow DEV/ID ... */
		return cmd_set_flow(argc - 1, argv + 1);
	}
	while (argc > 0) {
		if (!strcmp(argv[0], "dev") && argc > 1) {
			want_dev = argv[1];
		} else if (!strcmp(argv[0], "id") && argc > 1) {
			want_id = argv[1];
		} else if (strchr(argv[0], '/') && !want_dev) {
			/* DEV/ID, as sdrctl flow prints it */
			static char buf[256];

			snprintf(buf, sizeof(buf), "%s", argv[0]);
			*strchr(buf, '/') = '\0';
			want_dev = buf;
			want_id = strchr(argv[0], '/') + 1;
			argc--;
			argv++;
			continue;
		} else {
			err("flow: unexpected '%s' (usage: sdrctl flow [show] [dev DEV] [id ID])",
			    argv[0]);
			return EXIT_USAGE;
		}
		argc -= 2;
		argv += 2;
	}
	if (want_id && !is_integer(want_id)) {
		err("flow: id '%s' is not a number", want_id);
		return EXIT_USAGE;
	}
	if (select_devs(want_dev, &devs))
		return EXIT_FAIL;
	if (opt_json)
		j_open('[');
	for (int d = 0; d < devs.n; d++) {
		char dir[1024];
		struct names ids;

		snprintf(dir, sizeof(dir), "%s/%s/flows", class_dir, devs.v[d]);
		if (list_dir(dir, WANT_DIRS, &ids) < 0)
			continue;
		for (int i = 0; i < ids.n; i++) {
			if (want_id && atoll(want_id) != atoll(ids.v[i]))
				continue;
			if (show_flow(devs.v[d], ids.v[i], opt_stats) == 0)
				found++;
		}
		names_free(&ids);
	}
	if (opt_json)
		j_close(']');
	names_free(&devs);
	if (want_id && !found) {
		err("flow %s/%s: no such flow", want_dev ? want_dev : "*", want_id);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* ---- sdrctl stats ---- */

static int cmd_stats(int argc, char **argv)
{
	const char *want_dev = NULL;
	struct names devs;

	if (argc > 0 && !strcmp(argv[0], "show")) {
		argc--;
		argv++;
	}
	while (argc > 0) {
		if (!strcmp(argv[0], "-s") || !strcmp(argv[0], "-stats") ||
		    !strcmp(argv[0], "--stats")) {
			opt_stats = true;
			argc--;
			argv++;
		} else if (!strcmp(argv[0], "dev") && argc > 1) {
			want_dev = argv[1];
			argc -= 2;
			argv += 2;
		} else {
			err("stats: unexpected '%s' (usage: sdrctl stats [dev DEV] [-s])",
			    argv[0]);
			return EXIT_USAGE;
		}
	}
	if (select_devs(want_dev, &devs))
		return EXIT_FAIL;
	if (opt_json)
		j_open('[');
	for (int d = 0; d < devs.n; d++) {
		char dir[1024], sub[1100];
		struct names ids = { 0 };

		snprintf(dir, sizeof(dir), "%s/%s", class_dir, devs.v[d]);
		if (opt_json) {
			j_begin_elem();
			j_open('{');
			j_kv("dev", devs.v[d]);
			j_key("counters");
			j_open('{');
		} else {
			printf("%s:\n    ", devs.v[d]);
		}
		snprintf(sub, sizeof(sub), "%s/counters", dir);
		show_values(sub, dev_counter_order, NULL, "    ");
		if (opt_json) {
			j_close('}');
			j_key("drops");
			j_open('{');
		} else {
			printf("\n    drops:\n        ");
		}
		snprintf(sub, sizeof(sub), "%s/drops", dir);
		show_values(sub, (const char *const[]){ NULL }, NULL, "        ");
		if (opt_json)
			j_close('}');
		else
			putchar('\n');
		if (opt_stats) {
			snprintf(sub, sizeof(sub), "%s/flows", dir);
			list_dir(sub, WANT_DIRS, &ids);
			if (opt_json) {
				j_key("flows");
				j_open('[');
			}
			for (int i = 0; i < ids.n; i++) {
				char cdir[1400], ddir[1400];

				snprintf(cdir, sizeof(cdir), "%s/%s/counters", sub, ids.v[i]);
				snprintf(ddir, sizeof(ddir), "%s/%s/drops", sub, ids.v[i]);
				if (!is_dir(cdir))
					continue;	/* closed meanwhile */
				if (opt_json) {
					j_begin_elem();
					j_open('{');
					j_kv("id", ids.v[i]);
					j_key("counters");
					j_open('{');
					show_values(cdir, flow_counter_order, NULL, NULL);
					j_close('}');
					j_key("drops");
					j_open('{');
					show_values(ddir, (const char *const[]){ NULL },
						    NULL, NULL);
					j_close('}');
					j_close('}');
				} else {
					printf("    flow %s:\n        ", ids.v[i]);
					show_values(cdir, flow_counter_order, NULL, "        ");
					printf("\n        drops:\n            ");
					show_values(ddir, (const char *const[]){ NULL },
						    NULL, "            ");
					putchar('\n');
				}
			}
			if (opt_json)
				j_close(']');
			names_free(&ids);
		}
		if (opt_json)
			j_close('}');
	}
	if (opt_json)
		j_close(']');
	names_free(&devs);
	return EXIT_OK;
}

/* ---- module parameters: sdrctl default, sdrctl set default ---- */

static int cmd_default_show(int argc, char **argv)
{
	struct names l;

	if (argc > 1) {
		err("default: unexpected '%s' (usage: sdrctl default [show] [NAME])", argv[1]);
		return EXIT_USAGE;
	}
	if (!is_dir(module_dir)) {
		err("sdr.ko is not loaded (%s is missing)", module_dir);
		return EXIT_FAIL;
	}
	if (list_dir(param_dir, WANT_FILES, &l) < 0) {
		err("%s: %s", param_dir, strerror(errno));
		return EXIT_FAIL;
	}
	if (opt_json)
		j_open('[');
	int shown = 0;

	for (int i = 0; i < l.n; i++) {
		char path[1200], val[256];
		struct stat st;
		bool rw;

		if (argc == 1 && strcmp(argv[0], l.v[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", param_dir, l.v[i]);
		if (read_attr(path, val, sizeof(val)) < 0 || stat(path, &st) < 0)
			continue;
		rw = st.st_mode & 0222;
		shown++;
		if (opt_json) {
			j_begin_elem();
			j_open('{');
			j_kv("name", l.v[i]);
			j_kv("value", val);
			j_key("writable");
			fputs(rw ? "true" : "false", stdout);
			j_close('}');
		} else {
			printf("%-20s %-12s%s\n", l.v[i], val, rw ? "" : " (read-only)");
		}
	}
	if (opt_json)
		j_close(']');
	names_free(&l);
	if (argc == 1 && !shown) {
		err("default %s: no such parameter (sdrctl default lists them)", argv[0]);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int cmd_set_default(int argc, char **argv)
{
	char path[1024];
	const char *why = "";
	struct stat st;
	int ret;

	if (argc != 2) {
		err("usage: sdrctl set default NAME VALUE");
		return EXIT_USAGE;
	}
	if (!is_dir(module_dir)) {
		err("sdr.ko is not loaded (%s is missing)", module_dir);
		return EXIT_FAIL;
	}
	if (strchr(argv[0], '/') || argv[0][0] == '.') {
		err("set default %s: not a parameter name", argv[0]);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/%s", param_dir, argv[0]);
	if (stat(path, &st) < 0) {
		err("set default %s: no such parameter (sdrctl default lists them)", argv[0]);
		return EXIT_FAIL;
	}
	ret = write_attr(path, argv[1]);
	if (!ret)
		return EXIT_OK;
	switch (-ret) {
	case EINVAL:
		why = is_integer(argv[1]) ? " (out of range)" : " (not a valid value)";
		break;
	case EACCES:
	case EPERM:
		why = !(st.st_mode & 0222) ? " (read-only parameter)" : " (needs root)";
		break;
	}
	err("set default %s %s: %s%s", argv[0], argv[1], strerror(-ret), why);
	return EXIT_FAIL;
}

/* Why writing a file of a flow failed with @err, when it is the flow's. */
static const char *flow_write_why(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return "only the flow's owner or CAP_NET_ADMIN";
	case ENOENT:
	case ENODEV:
		return "the flow is gone";
	}
	return NULL;
}

/* sdrctl set flow DEV/ID ec K M: flows/<id>/ec_geometry */
static int set_flow_ec(const char *flow, const char *dir, char **argv)
{
	char path[1200], val[64], why[128] = "";
	struct sdr_caps caps;
	int ret;

	if (!is_integer(argv[0]) || !is_integer(argv[1])) {
		err("usage: sdrctl set flow DEV/ID ec K M");
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/ec_geometry", dir);
	if (!is_file(path)) {
		err("set flow %s ec: the loaded module has no per-flow EC geometry",
		    flow);
		return EXIT_FAIL;
	}
	snprintf(val, sizeof(val), "%s %s", argv[0], argv[1]);
	ret = write_attr(path, val);
	if (!ret)
		return EXIT_OK;
	if (-ret == EINVAL && !sdr_query(NULL, &caps))
		snprintf(why, sizeof(why), " (k is 1..%u, m 1..%u)",
			 caps.ec_max_k, caps.ec_max_m);
	else if (flow_write_why(-ret))
		snprintf(why, sizeof(why), " (%s)", flow_write_why(-ret));
	err("set flow %s ec %s %s: %s%s", flow, argv[0], argv[1], strerror(-ret), why);
	return EXIT_FAIL;
}

static int cmd_set_flow(int argc, char **argv)
{
	char dev[256], path[1200], dir[1100], runs[128], why[256] = "";
	const char *id, *what;
	char *slash;
	int ret;

	if (!((argc == 3 && !strcmp(argv[1], "policy")) ||
	      (argc == 4 && !strcmp(argv[1], "ec"))) || !strchr(argv[0], '/')) {
		if (run_policies("|", runs, sizeof(runs)))
			err("usage: sdrctl set flow DEV/ID policy %s | sdrctl set flow DEV/ID ec K M",
			    runs);
		else
			err("usage: sdrctl set flow DEV/ID policy POLICY | sdrctl set flow DEV/ID ec K M");
		return EXIT_USAGE;
	}
	snprintf(dev, sizeof(dev), "%s", argv[0]);
	slash = strchr(dev, '/');
	*slash = '\0';
	id = slash + 1;
	if (!is_integer(id) || strchr(dev, '.')) {
		err("set flow %s: expected DEV/ID, as sdrctl flow prints it", argv[0]);
		return EXIT_USAGE;
	}
	if (need_module())
		return EXIT_FAIL;
	snprintf(dir, sizeof(dir), "%s/%s/flows/%s", class_dir, dev, id);
	snprintf(path, sizeof(path), "%s/policy", dir);
	if (!is_file(path)) {
		err("set flow %s: no such flow", argv[0]);
		return EXIT_FAIL;
	}
	if (argc == 4)
		return set_flow_ec(argv[0], dir, argv + 2);
	ret = write_attr(path, argv[2]);
	if (!ret)
		return EXIT_OK;
	switch (-ret) {
	case EINVAL:
	case EOPNOTSUPP:
		/* which policies there are is the module's to say */
		what = -ret == EINVAL ? "unknown policy" :
		       "the loaded module does not run this policy";
		if (run_policies(", ", runs, sizeof(runs)))
			snprintf(why, sizeof(why), " (%s; it runs %s)", what, runs);
		else
			snprintf(why, sizeof(why), " (%s)", what);
		break;
	default:
		if (flow_write_why(-ret))
			snprintf(why, sizeof(why), " (%s)", flow_write_why(-ret));
		break;
	}
	err("set flow %s policy %s: %s%s", argv[0], argv[2], strerror(-ret), why);
	return EXIT_FAIL;
}

static int cmd_set(int argc, char **argv)
{
	if (argc > 0 && !strcmp(argv[0], "default"))
		return cmd_set_default(argc - 1, argv + 1);
	if (argc > 0 && !strcmp(argv[0], "flow"))
		return cmd_set_flow(argc - 1, argv + 1);
	err("usage: sdrctl set default NAME VALUE | sdrctl set flow DEV/ID policy POLICY | sdrctl set flow DEV/ID ec K M");
	return EXIT_USAGE;
}

static int cmd_default(int argc, char **argv)
{
	if (argc > 0 && !strcmp(argv[0], "set"))
		return cmd_set_default(argc - 1, argv + 1);
	if (argc > 0 && !strcmp(argv[0], "show"))
		return cmd_default_show(argc - 1, argv + 1);
	return cmd_default_show(argc, argv);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	char runs[128];

	/* the choices are the policies the loaded module runs */
	if (!run_policies("|", runs, sizeof(runs)))
		snprintf(runs, sizeof(runs), "POLICY");
	fprintf(f,
		"usage: sdrctl [OPTIONS] OBJECT [COMMAND] [ARGS]\n"
		"\n"
		"  sdrctl [-j] [-p] dev [show] [DEV]\n"
		"  sdrctl [-j] [-p] [-s] flow [show] [dev DEV] [id ID]\n"
		"  sdrctl [-j] [-p] stats [show] [dev DEV] [-s]\n"
		"  sdrctl [-j] [-p] default [show] [NAME]\n"
		"  sdrctl [-j] [-p] caps [show]\n"
		"  sdrctl set default NAME VALUE\n"
		"  sdrctl set flow DEV/ID policy %s\n"
		"  sdrctl set flow DEV/ID ec K M\n"
		"  sdrctl help\n"
		"\n"
		"options:\n"
		"  -j, --json     JSON output (an array of objects)\n"
		"  -p, --pretty   indented JSON\n"
		"  -s, --stats    all counters (flow), per-flow counters (stats)\n"
		"  -h, --help     this text\n"
		"\n"
		"exit status: 0 ok, 1 operation failed, 2 usage error\n", runs);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} objects[] = {
	{ "dev", cmd_dev },
	{ "device", cmd_dev },
	{ "flow", cmd_flow },
	{ "flows", cmd_flow },
	{ "stats", cmd_stats },
	{ "statistic", cmd_stats },
	{ "default", cmd_default },
	{ "defaults", cmd_default },
	{ "caps", cmd_caps },
	{ "capabilities", cmd_caps },
	{ "set", cmd_set },
};

int main(int argc, char **argv)
{
	int i = 1;

	setup_paths();
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-j") || !strcmp(o, "--json") || !strcmp(o, "-json")) {
			opt_json = true;
		} else if (!strcmp(o, "-p") || !strcmp(o, "--pretty") ||
			   !strcmp(o, "-pretty")) {
			opt_pretty = true;
		} else if (!strcmp(o, "-s") || !strcmp(o, "--stats")) {
			opt_stats = true;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (o[1] != '-' && strspn(o + 1, "jps") == strlen(o + 1)) {
			/* combined flags: -jp, -js ... */
			opt_json |= !!strchr(o, 'j');
			opt_pretty |= !!strchr(o, 'p');
			opt_stats |= !!strchr(o, 's');
		} else {
			err("unknown option '%s' (sdrctl help)", o);
			return EXIT_USAGE;
		}
	}
	if (opt_pretty)
		opt_json = true;	/* -p alone: pretty JSON, as rdma -p -j */
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help") || !strcmp(argv[i], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t k = 0; k < sizeof(objects) / sizeof(objects[0]); k++) {
		int ret;

		if (strcmp(argv[i], objects[k].name))
			continue;
		ret = objects[k].fn(argc - i - 1, argv + i + 1);
		if (fflush(stdout) == EOF && ret == EXIT_OK) {
			err("writing output: %s", strerror(errno));
			ret = EXIT_FAIL;
		}
		return ret;
	}
	err("unknown object '%s' (sdrctl help)", argv[i]);
	return EXIT_USAGE;
}
