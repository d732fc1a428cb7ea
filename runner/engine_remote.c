/*
 * engine_remote.c - which engine host a container engine's CLI talks to
 * (the remote_host members of docker's and podman's tables; see
 * rn_engine_remote_host() in engine.h): one rule for docker's DOCKER_HOST
 * and contexts, podman's CONTAINER_HOST and connections.
 *
 * What each CLI reads, and so what is read here (each file at most
 * CONFIG_MAX bytes, never following a link it was not named by; a file
 * that cannot be read or parsed counts as absent):
 *   docker: DOCKER_HOST; else the context DOCKER_CONTEXT names, else
 *     config.json's "currentContext" (in DOCKER_CONFIG, else ~/.docker);
 *     "default" is the local daemon. A context's endpoint is
 *     Endpoints.docker.Host of the contexts/meta/<hash>/meta.json whose
 *     "Name" is the context (the directories are scanned, so no hash is
 *     computed here).
 *   podman: CONTAINER_HOST; else the connection CONTAINER_CONNECTION names;
 *     else, in remote mode only (containers.conf's [engine] remote = true:
 *     plain podman on Linux runs locally whatever its default connection
 *     says), the default connection. Connections
 *     and the default come from podman-connections.json
 *     (PODMAN_CONNECTIONS_CONF, else $XDG_CONFIG_HOME/containers/, podman
 *     5) first, then containers.conf: the one file CONTAINERS_CONF names,
 *     else /usr/share/containers, /etc/containers (and its
 *     containers.conf.d), then, not as root, $XDG_CONFIG_HOME/containers
 *     (~/.config), later files overriding; CONTAINERS_CONF_OVERRIDE last.
 *     Of containers.conf only what podman writes is read: [engine] remote
 *     and active_service, [engine.service_destinations.NAME] uri (or NAME =
 *     { uri = "..." } under [engine.service_destinations]).
 * The endpoint found is remote unless it is a local socket (empty, a plain
 * path, unix://).
 */
#include "engine.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/json.h"

#define CONFIG_MAX ((size_t)1 << 20)
/* Docker contexts scanned at most (each is one small meta.json). */
#define CONTEXTS_MAX 1000

/* The value of name in environ, or NULL when unset. */
static const char *env_of(char *const *environ, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* A local socket: empty, a plain path, or unix://. */
static int host_is_local(const char *v)
{
	return !*v || v[0] == '/' || !strncmp(v, "unix://", 7);
}

/* Owned copy of host when it is remote, else NULL (host may be NULL). */
static char *remote_or_null(const char *host)
{
	return host && !host_is_local(host) ? fg_xstrdup(host) : NULL;
}

/* The file at path as text (owned), or NULL. */
static char *read_text(const char *path)
{
	struct fg_buf b;

	fg_buf_init(&b, CONFIG_MAX);
	if (fg_read_file_at(AT_FDCWD, path, CONFIG_MAX, FG_READ_FOLLOW, &b, NULL)) {
		fg_buf_release(&b);
		return NULL;
	}
	return fg_buf_detach(&b, NULL);
}

static cJSON *read_json(const char *path)
{
	char *text = read_text(path);
	cJSON *o = text ? cJSON_Parse(text) : NULL;

	free(text);
	return o;
}

/* dir/a/b (owned). */
static char *join3(const char *dir, const char *a, const char *b)
{
	char *p = fg_path_join(dir, a), *q = fg_path_join(p, b);

	free(p);
	return q;
}

/* ---- docker ---- */

/* DOCKER_CONFIG, else $HOME/.docker (owned), or NULL. */
static char *docker_config_dir(char *const *environ)
{
	const char *dir = env_of(environ, "DOCKER_CONFIG"), *home = env_of(environ, "HOME");

	if (dir && *dir)
		return fg_xstrdup(dir);
	return home && *home ? fg_path_join(home, ".docker") : NULL;
}

/* The docker endpoint of context name (owned), from its meta.json. */
static char *docker_context_host(const char *cfg, const char *name)
{
	char *metas = join3(cfg, "contexts", "meta"), *host = NULL;
	struct fg_dir it;
	const char *entry = NULL;
	int seen = 0;

	if (!fg_dir_open(&it, AT_FDCWD, metas, 0))
		entry = fg_dir_next(&it);
	for (; entry && !host && seen++ < CONTEXTS_MAX; entry = fg_dir_next(&it)) {
		char *path;
		cJSON *o;
		const char *h;

		if (entry[0] == '.')
			continue;
		path = join3(metas, entry, "meta.json");
		o = read_json(path);
		h = fg_json_str(fg_json_obj(fg_json_obj(o, "Endpoints"), "docker"), "Host");
		if (h && fg_json_str(o, "Name") && !strcmp(fg_json_str(o, "Name"), name))
			host = fg_xstrdup(h);
		cJSON_Delete(o);
		free(path);
	}
	fg_dir_close(&it);
	free(metas);
	return host;
}

static char *docker_remote(char *const *environ)
{
	const char *host = env_of(environ, "DOCKER_HOST"), *name = env_of(environ, "DOCKER_CONTEXT");
	char *cfg, *ctx = NULL, *found = NULL, *r;
	cJSON *conf = NULL;

	if (host && *host)
		return remote_or_null(host);
	cfg = docker_config_dir(environ);
	if (!cfg)
		return NULL;
	if (!name || !*name) {
		char *path = fg_path_join(cfg, "config.json");

		conf = read_json(path);
		free(path);
		name = fg_json_str(conf, "currentContext");
	}
	if (name && *name && strcmp(name, "default"))
		ctx = fg_xstrdup(name);
	cJSON_Delete(conf);
	if (ctx)
		found = docker_context_host(cfg, ctx);
	r = remote_or_null(found);
	free(found);
	free(ctx);
	free(cfg);
	return r;
}

/* ---- podman ---- */

/* What the podman configuration says: remote mode, the default connection
 * and the URIs of the connections (name, URI pairs). */
struct podman_conf {
	int remote;
	char *def;                 /* owned, or NULL */
	struct fg_strvec conns;    /* name, uri, name, uri, ... */
};

static const char *conn_uri(const struct podman_conf *pc, const char *name)
{
	for (size_t i = 0; i + 1 < pc->conns.n; i += 2)
		if (!strcmp(pc->conns.v[i], name))
			return pc->conns.v[i + 1];
	return NULL;
}

/* Adds (or, later files winning, replaces) a connection. */
static void conn_set(struct podman_conf *pc, const char *name, const char *uri, int replace)
{
	for (size_t i = 0; i + 1 < pc->conns.n; i += 2) {
		if (strcmp(pc->conns.v[i], name))
			continue;
		if (replace) {
			free(pc->conns.v[i + 1]);
			pc->conns.v[i + 1] = fg_xstrdup(uri);
		}
		return;
	}
	fg_strvec_push(&pc->conns, name);
	fg_strvec_push(&pc->conns, uri);
}

/* podman-connections.json (podman 5): {"Connection": {"Default": NAME,
 * "Connections": {NAME: {"URI": ...}}}}; read after containers.conf, so
 * what it says wins. */
static void podman_json(struct podman_conf *pc, const char *path)
{
	cJSON *o = read_json(path);
	const cJSON *c = fg_json_obj(o, "Connection"), *e;
	const char *def = fg_json_str(c, "Default");

	cJSON_ArrayForEach(e, fg_json_obj(c, "Connections")) {
		const char *uri = fg_json_str(e, "URI");

		if (uri && e->string)
			conn_set(pc, e->string, uri, 1);
	}
	if (def && *def) {
		free(pc->def);
		pc->def = fg_xstrdup(def);
	}
	cJSON_Delete(o);
}

/* A TOML value of the kinds podman writes: "basic" or 'literal' strings,
 * true, false (owned text; NULL for anything else). */
static char *toml_value(const char *v)
{
	const char *end;

	v += strspn(v, " \t");
	if (*v == '"' || *v == '\'') {
		end = strchr(v + 1, *v);
		return end ? fg_xstrndup(v + 1, (size_t)(end - v - 1)) : NULL;
	}
	if (!strncmp(v, "true", 4) || !strncmp(v, "false", 5))
		return fg_xstrdup(v[0] == 't' ? "true" : "false");
	return NULL;
}

/* The uri of an inline table `{ uri = "...", identity = "..." }`. */
static char *toml_inline_uri(const char *v)
{
	const char *u = strstr(v, "uri");

	while (u && u[3] != ' ' && u[3] != '=')
		u = strstr(u + 3, "uri");
	u = u ? strchr(u, '=') : NULL;
	return u ? toml_value(u + 1) : NULL;
}

/* name with spaces and quotes taken out, in place ("engine"."x" -> engine.x). */
static void toml_key(char *k)
{
	char *o = k;

	for (char *p = k; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '"' && *p != '\'')
			*o++ = *p;
	*o = '\0';
}

#define DEST "engine.service_destinations"

/* One `key = value` line of section sec. */
static void conf_entry(struct podman_conf *pc, const char *sec, char *key, const char *val)
{
	char *v;

	toml_key(key);
	if (!strcmp(sec, DEST)) {
		v = toml_inline_uri(val);
		if (v)
			conn_set(pc, key, v, 1);
		free(v);
		return;
	}
	v = toml_value(val);
	if (v && !strcmp(sec, "engine") && !strcmp(key, "remote"))
		pc->remote = !strcmp(v, "true");
	if (v && !strcmp(sec, "engine") && !strcmp(key, "active_service")) {
		free(pc->def);
		pc->def = fg_xstrdup(v);
	}
	if (v && !strncmp(sec, DEST ".", sizeof(DEST)) && sec[sizeof(DEST)] && !strcmp(key, "uri"))
		conn_set(pc, sec + sizeof(DEST), v, 1);
	free(v);
}

/* One containers.conf: sections and key = value lines, comments skipped. */
static void podman_conf_file(struct podman_conf *pc, const char *path)
{
	char *text = read_text(path), *sec = fg_xstrdup("");

	for (char *line = text, *next; line && *line; line = next) {
		char *eq;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (*line == '[' && line[1] != '[' && strchr(line, ']')) {
			free(sec);
			sec = fg_xstrndup(line + 1, (size_t)(strchr(line, ']') - line - 1));
			toml_key(sec);
		} else if (*line != '#' && (eq = strchr(line, '='))) {
			*eq = '\0';
			conf_entry(pc, sec, line, eq + 1);
		}
	}
	free(sec);
	free(text);
}

/* dir's *.conf files, in name order. */
static void podman_conf_dir(struct podman_conf *pc, const char *dir)
{
	struct fg_strvec names;
	struct fg_dir it;
	const char *name;

	fg_strvec_init(&names);
	if (!fg_dir_open(&it, AT_FDCWD, dir, 0))
		while ((name = fg_dir_next(&it)))
			fg_strvec_push(&names, name);
	fg_dir_close(&it);
	fg_strvec_sort(&names);
	for (size_t i = 0; i < names.n; i++) {
		size_t len = strlen(names.v[i]);

		if (len > 5 && !strcmp(names.v[i] + len - 5, ".conf")) {
			char *path = fg_path_join(dir, names.v[i]);

			podman_conf_file(pc, path);
			free(path);
		}
	}
	fg_strvec_release(&names);
}

/* $XDG_CONFIG_HOME/containers, else ~/.config/containers (owned), or NULL. */
static char *user_containers_dir(char *const *environ)
{
	const char *xdg = env_of(environ, "XDG_CONFIG_HOME"), *home = env_of(environ, "HOME");

	if (xdg && *xdg)
		return fg_path_join(xdg, "containers");
	return home && *home ? join3(home, ".config", "containers") : NULL;
}

static void podman_conf_load(struct podman_conf *pc, char *const *environ)
{
	const char *conf = env_of(environ, "CONTAINERS_CONF");
	const char *over = env_of(environ, "CONTAINERS_CONF_OVERRIDE");
	const char *json = env_of(environ, "PODMAN_CONNECTIONS_CONF");
	char *user = user_containers_dir(environ), *p;

	if (conf && *conf) {
		podman_conf_file(pc, conf);
	} else {
		podman_conf_file(pc, "/usr/share/containers/containers.conf");
		podman_conf_file(pc, "/etc/containers/containers.conf");
		podman_conf_dir(pc, "/etc/containers/containers.conf.d");
		if (user && geteuid() != 0) {
			p = fg_path_join(user, "containers.conf");
			podman_conf_file(pc, p);
			free(p);
			p = fg_path_join(user, "containers.conf.d");
			podman_conf_dir(pc, p);
			free(p);
		}
	}
	if (over && *over)
		podman_conf_file(pc, over);
	p = json && *json ? fg_xstrdup(json) : user ? fg_path_join(user, "podman-connections.json") : NULL;
	if (p)
		podman_json(pc, p);
	free(p);
	free(user);
}

static char *podman_remote(char *const *environ)
{
	const char *host = env_of(environ, "CONTAINER_HOST");
	const char *name = env_of(environ, "CONTAINER_CONNECTION");
	struct podman_conf pc = { 0 };
	char *r;

	if (host && *host)
		return remote_or_null(host);
	fg_strvec_init(&pc.conns);
	podman_conf_load(&pc, environ);
	if (!name || !*name)
		name = pc.remote ? pc.def : NULL;
	r = name ? remote_or_null(conn_uri(&pc, name)) : NULL;
	free(pc.def);
	fg_strvec_release(&pc.conns);
	return r;
}

char *rn__docker_remote_host(const struct rn_engine_params *p)
{
	return docker_remote(p->environ);
}

char *rn__podman_remote_host(const struct rn_engine_params *p)
{
	return podman_remote(p->environ);
}
