/*
 * kube_spec.c - the Job of a kubernetes run and the skills ConfigMap
 * (kube.h, docs/design/kubernetes.md "The Job", "Task file and skills"),
 * and the values they are made of: the quantities of --memory and --cpus,
 * --run-as and --fs-group, the --env values, a process's start time (the
 * runner's identity in the annotations).
 */
#include "kube.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/alloc.h"
#include "forge/fsutil.h"
#include "forge/json.h"
#include "forge/num.h"
#include "forge/text.h"

#include "internal_util.h"

#define SKILLS_DEPTH_MAX 8

char *rn_kube_quantity_memory(const char *v)
{
	static const char *const units[] = { "", "Ki", "Mi", "Gi" };
	size_t n = strspn(v, "0123456789");
	const char *u;

	if (n == 0 || n > 18 || (v[n] && v[n + 1]))
		return NULL;
	if (!v[n] || v[n] == 'b' || v[n] == 'B')
		return fg_xasprintf("%.*s", (int)n, v);
	u = strchr("kmg", tolower((unsigned char)v[n]));
	if (!u)
		return NULL;
	return fg_xasprintf("%.*s%s", (int)n, v, units[u - "kmg" + 1]);
}

char *rn_kube_quantity_cpus(const char *v)
{
	double d;

	if (fg_parse_double(v, 0.001, 1024, &d))
		return NULL;
	return fg_xasprintf("%ldm", (long)(d * 1000.0 + 0.5));
}

const char *rn_kube_env_value(const struct rn_engine_params *p, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = p->environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

int rn_kube_fs_group_parse(const char *v, long *gid)
{
	long n;

	if (fg_parse_long(v, 1, 2147483647L, &n))
		return -EINVAL;
	if (gid)
		*gid = n;
	return 0;
}

int rn_kube_run_as_parse(const char *v, long *uid, long *gid)
{
	const char *colon = strchr(v, ':');
	char *u = fg_xstrndup(v, colon ? (size_t)(colon - v) : strlen(v));
	long a = -1, b = -1;
	int bad = fg_parse_long(u, 1, 2147483647L, &a) != 0 ||
		  (colon && fg_parse_long(colon + 1, 0, 2147483647L, &b) != 0);

	free(u);
	if (bad)
		return -EINVAL;
	if (uid)
		*uid = a;
	if (gid)
		*gid = b;
	return 0;
}

unsigned long long rn_kube_proc_start(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long start = 0;
	const char *p;
	int fd, field = 2;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and ')': count from the last ')'. */
	p = strrchr(buf, ')');
	for (; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (p && field == 22)
		start = strtoull(p, NULL, 10);
	return start;
}

/* ---- the Job ---- */

static void add_str_array(cJSON *o, const char *key, const struct fg_strvec *v)
{
	cJSON *a = cJSON_AddArrayToObject(o, key);

	for (size_t i = 0; i < v->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v->v[i]));
}

/* The entrypoint's arguments, as for docker (engine_container.c). */
static void entry_args(const struct rn_engine_params *p, cJSON *c)
{
	struct fg_strvec a;

	fg_strvec_init(&a);
	fg_strvec_pushl(&a, "run", "--workspace", "/workspace", "--skills-dir", "/skills", NULL);
	fg_strvec_push_opt(&a, "--step", p->step);
	fg_strvec_push_opt(&a, "--skill", p->skill);
	fg_strvec_push_opt(&a, "--task-key", p->task_key);
	fg_strvec_push_opt(&a, "--task-file", p->task_file ? "/forge/task/task.json" : NULL);
	fg_strvec_push(&a, "--clear-stale");
	add_str_array(c, "args", &a);
	fg_strvec_release(&a);
}

static int is_extra(const struct rn_engine_params *p, const char *name)
{
	for (size_t i = 0; i < p->nextra_env; i++)
		if (!strcmp(p->extra_env[i], name))
			return 1;
	return 0;
}

/* Settings as values; --env names from the Secret, by name (an unset one
 * is not in the Secret and so not set). */
static void container_env(const struct rn_engine_params *p, cJSON *c)
{
	struct fg_strvec names;
	cJSON *env = cJSON_AddArrayToObject(c, "env"), *e, *ref;

	fg_strvec_init(&names);
	(void)rn__container_env_names(p, &names, NULL, 0);
	for (size_t i = 0; i < names.n; i++) {
		const char *n = names.v[i];
		const char *v = !strcmp(n, "FORGE_RUN_ID") ? p->run_id
				: !strcmp(n, "FORGE_CYCLE_DIR") ? p->cycle_dir
				: !strcmp(n, "FORGE_TRACEPARENT") ? p->traceparent
				: !strcmp(n, "FORGE_DEADLINE") ? p->deadline : rn_kube_env_value(p, n);

		if (!v)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", n);
		if (is_extra(p, n) && strcmp(n, "FORGE_RUN_ID") && strcmp(n, "FORGE_CYCLE_DIR")) {
			char *secret = fg_xasprintf("forge-%s-env", p->run_id);

			ref = cJSON_AddObjectToObject(cJSON_AddObjectToObject(e, "valueFrom"), "secretKeyRef");
			cJSON_AddStringToObject(ref, "name", secret);
			cJSON_AddStringToObject(ref, "key", n);
			free(secret);
		} else {
			cJSON_AddStringToObject(e, "value", v);
		}
		cJSON_AddItemToArray(env, e);
	}
	fg_strvec_release(&names);
}

/* requests = limits: the Guaranteed QoS class, the last to be evicted. */
static void resources(const struct rn_engine_params *p, cJSON *c)
{
	cJSON *r = cJSON_AddObjectToObject(c, "resources");
	cJSON *lim = cJSON_AddObjectToObject(r, "limits"), *req = cJSON_AddObjectToObject(r, "requests");
	const struct rn_container_opts *o = &rn_kube_opts_of(p)->c;
	char *mem = o->memory ? rn_kube_quantity_memory(o->memory) : NULL;
	char *cpu = o->cpus ? rn_kube_quantity_cpus(o->cpus) : NULL;

	if (mem) {
		cJSON_AddStringToObject(lim, "memory", mem);
		cJSON_AddStringToObject(req, "memory", mem);
	}
	if (cpu) {
		cJSON_AddStringToObject(lim, "cpu", cpu);
		cJSON_AddStringToObject(req, "cpu", cpu);
	}
	free(mem);
	free(cpu);
}

static void mount(cJSON *mounts, const char *name, const char *path, const char *sub, int ro)
{
	cJSON *m = fg_json_push_object(mounts);

	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "mountPath", path);
	fg_json_add_str_if(m, "subPath", sub);
	fg_json_add_true_if(m, "readOnly", ro);
}

static cJSON *container(const struct rn_engine_params *p)
{
	cJSON *c = cJSON_CreateObject(), *sc, *caps, *mounts;

	cJSON_AddStringToObject(c, "name", RN_KUBE_CONTAINER);
	cJSON_AddStringToObject(c, "image", p->image);
	cJSON_AddStringToObject(c, "imagePullPolicy", "IfNotPresent");
	if (p->sealed) {
		/* The key line comes through kubectl attach; its end closes stdin. */
		cJSON_AddTrueToObject(c, "stdin");
		cJSON_AddTrueToObject(c, "stdinOnce");
	}
	entry_args(p, c);
	container_env(p, c);
	resources(p, c);
	sc = cJSON_AddObjectToObject(c, "securityContext");
	cJSON_AddFalseToObject(sc, "allowPrivilegeEscalation");
	caps = cJSON_AddArrayToObject(cJSON_AddObjectToObject(sc, "capabilities"), "drop");
	cJSON_AddItemToArray(caps, cJSON_CreateString("ALL"));
	cJSON_AddBoolToObject(sc, "readOnlyRootFilesystem", rn_kube_opts_of(p)->c.read_only_rootfs);
	cJSON_AddStringToObject(c, "terminationMessagePath", "/dev/termination-log");
	cJSON_AddStringToObject(c, "terminationMessagePolicy", "File");
	mounts = cJSON_AddArrayToObject(c, "volumeMounts");
	mount(mounts, "workspace", "/workspace", rn_kube_opts_of(p)->workspace_subpath, 0);
	if (p->skills_dir)
		mount(mounts, "skills", "/skills", NULL, 1);
	if (p->task_file)
		mount(mounts, "task", "/forge/task", NULL, 1);
	mount(mounts, "tmp", "/tmp", NULL, 0);
	return c;
}

static cJSON *volume(cJSON *vols, const char *name, const char *kind)
{
	cJSON *v = cJSON_CreateObject(), *src;

	cJSON_AddStringToObject(v, "name", name);
	src = cJSON_AddObjectToObject(v, kind);
	cJSON_AddItemToArray(vols, v);
	return src;
}

static void volumes(const struct rn_engine_params *p, cJSON *spec, cJSON *skill_items)
{
	cJSON *vols = cJSON_AddArrayToObject(spec, "volumes"), *src;
	char *name;

	src = volume(vols, "workspace", "persistentVolumeClaim");
	cJSON_AddStringToObject(src, "claimName", p->workspace_volume);
	if (p->skills_dir) {
		src = volume(vols, "skills", "configMap");
		name = fg_xasprintf("forge-%s-skills", p->run_id);
		cJSON_AddStringToObject(src, "name", name);
		free(name);
		cJSON_AddItemToObject(src, "items", skill_items ? skill_items : cJSON_CreateArray());
		skill_items = NULL;
	}
	cJSON_Delete(skill_items);
	if (p->task_file) {
		src = volume(vols, "task", "configMap");
		name = fg_xasprintf("forge-%s-task", p->run_id);
		cJSON_AddStringToObject(src, "name", name);
		free(name);
	}
	volume(vols, "tmp", "emptyDir");
}

static void pod_security(const struct rn_engine_params *p, cJSON *spec)
{
	const struct rn_kube_opts *k = rn_kube_opts_of(p);
	cJSON *sc = cJSON_AddObjectToObject(spec, "securityContext");
	long uid = -1, gid = -1;

	cJSON_AddTrueToObject(sc, "runAsNonRoot");
	if (k->run_as && !rn_kube_run_as_parse(k->run_as, &uid, &gid)) {
		cJSON_AddNumberToObject(sc, "runAsUser", (double)uid);
		if (gid >= 0)
			cJSON_AddNumberToObject(sc, "runAsGroup", (double)gid);
	}
	/* The kubelet makes the volume group-writable by fsGroup (where its
	 * driver supports it): a root-owned claim the pod's user may write. */
	if (k->fs_group && !rn_kube_fs_group_parse(k->fs_group, &gid))
		cJSON_AddNumberToObject(sc, "fsGroup", (double)gid);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(sc, "seccompProfile"), "type", "RuntimeDefault");
}

void rn_kube_job_spec(const struct rn_engine_params *p, cJSON *job, cJSON *skill_items)
{
	cJSON *spec = cJSON_AddObjectToObject(job, "spec"), *tmpl, *pod;
	const cJSON *meta = fg_json_obj(job, "metadata");

	cJSON_AddNumberToObject(spec, "backoffLimit", 0);
	if (p->timeout > 0)
		cJSON_AddNumberToObject(spec, "activeDeadlineSeconds",
					(double)((long)p->timeout + (p->timeout > (double)(long)p->timeout)));
	cJSON_AddNumberToObject(spec, "ttlSecondsAfterFinished", RN_KUBE_TTL_AFTER_FINISHED);
	tmpl = cJSON_AddObjectToObject(spec, "template");
	cJSON_AddItemToObject(cJSON_AddObjectToObject(tmpl, "metadata"), "labels",
			      cJSON_Duplicate(fg_json_obj(meta, "labels"), 1));
	pod = cJSON_AddObjectToObject(tmpl, "spec");
	cJSON_AddStringToObject(pod, "restartPolicy", "Never");
	cJSON_AddNumberToObject(pod, "terminationGracePeriodSeconds", RN_KUBE_TERM_GRACE);
	cJSON_AddFalseToObject(pod, "automountServiceAccountToken");
	cJSON_AddFalseToObject(pod, "enableServiceLinks");
	pod_security(p, pod);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(pod, "containers"), container(p));
	volumes(p, pod, skill_items);
}

/* ---- the skills directory ---- */

struct skills_walk {
	cJSON *data, *items;
	size_t total;
	char *err;
	size_t errlen;
};

static int key_ok(const char *rel)
{
	for (const char *s = rel; *s; s++)
		if (!strchr("-._/", *s) && !(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9'))
			return 0;
	return !strstr(rel, "__");
}

/* rel with each '/' as "__": rel holds no "__" (key_ok()), so the
 * mapping back is one to one. Owned. */
static char *key_of(const char *rel)
{
	struct fg_buf b;

	fg_buf_init(&b, 2 * strlen(rel) + 1);
	for (const char *s = rel; *s; s++)
		if (*s == '/')
			fg_buf_adds(&b, "__");
		else
			fg_buf_addc(&b, *s);
	return fg_buf_detach(&b, NULL);
}

static int read_text(struct skills_walk *w, int dfd, const char *name, struct fg_buf *b)
{
	int r = fg_read_file_at(dfd, name, RN_KUBE_SKILLS_MAX - w->total, 0, b, NULL);

	if (!r && memchr(b->data, '\0', b->len))
		r = -EILSEQ;
	for (size_t i = 0; !r && i < b->len;) {
		size_t k = fg_utf8_seq(b->data + i, b->len - i);

		r = k ? 0 : -EILSEQ;
		i += k;
	}
	return r;
}

static int add_skill_file(struct skills_walk *w, int dfd, const char *name, const char *rel)
{
	struct fg_buf b;
	cJSON *item;
	char *key;
	int r;

	if (!key_ok(rel)) {
		rn__seterr(w->err, w->errlen, "skills file '%s' cannot be a ConfigMap key (letters, "
			   "digits, '-', '.', '_', no '__')", rel);
		return -EINVAL;
	}
	fg_buf_init(&b, RN_KUBE_SKILLS_MAX);
	r = read_text(w, dfd, name, &b);
	if (r) {
		rn__seterr(w->err, w->errlen, "skills file '%s' cannot go into a ConfigMap: %s", rel,
			   r == -EFBIG ? "the skills are over 960 KiB in all (bake them into the image "
					 "instead: its /skills is the default without --skills-dir)"
			   : r == -ELOOP ? "a symlink" : r == -EILSEQ ? "not UTF-8 text" : strerror(-r));
		fg_buf_release(&b);
		return -EINVAL;
	}
	w->total += b.len;
	key = key_of(rel);
	cJSON_AddStringToObject(w->data, key, fg_buf_str(&b));
	item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "key", key);
	cJSON_AddStringToObject(item, "path", rel);
	cJSON_AddItemToArray(w->items, item);
	free(key);
	fg_buf_release(&b);
	return 0;
}

static int walk_dir(struct skills_walk *w, int dfd, const char *rel, int depth);

static int walk_entry(struct skills_walk *w, int dfd, const char *name, const char *rel, int depth)
{
	struct stat st;
	char *sub = *rel ? fg_xasprintf("%s/%s", rel, name) : fg_xstrdup(name);
	int r = 0, cfd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		rn__seterr(w->err, w->errlen, "skills dir entry '%s': %s", sub, strerror(errno));
		r = -EINVAL;
	} else if (S_ISDIR(st.st_mode)) {
		cfd = depth < SKILLS_DEPTH_MAX ? fg_open_dir(dfd, name, FG_DIR_NOFOLLOW) : -ELOOP;
		if (cfd < 0) {
			rn__seterr(w->err, w->errlen, "skills dir '%s': %s", sub,
				   cfd == -ELOOP ? "too deep" : strerror(-cfd));
			r = -EINVAL;
		} else {
			r = walk_dir(w, cfd, sub, depth + 1);
			close(cfd);
		}
	} else if (S_ISREG(st.st_mode)) {
		r = add_skill_file(w, dfd, name, sub);
	} else {
		rn__seterr(w->err, w->errlen, "skills entry '%s' is not a regular file or directory "
			   "(symlinks are refused: a ConfigMap holds copies)", sub);
		r = -EINVAL;
	}
	free(sub);
	return r;
}

/* The entries in name order, so the manifest is deterministic. */
static int walk_dir(struct skills_walk *w, int dfd, const char *rel, int depth)
{
	struct fg_strvec names;
	struct fg_dir it;
	const char *name;
	int r = 0;

	if (fg_dir_open_fd(&it, dfd)) {
		rn__seterr(w->err, w->errlen, "skills dir '%s': %s", *rel ? rel : ".", strerror(-it.err));
		fg_dir_close(&it);
		return -EINVAL;
	}
	fg_strvec_init(&names);
	while ((name = fg_dir_next(&it)))
		fg_strvec_push(&names, name);
	fg_dir_close(&it);
	fg_strvec_sort(&names);
	for (size_t i = 0; !r && i < names.n; i++)
		r = walk_entry(w, dfd, names.v[i], rel, depth);
	fg_strvec_release(&names);
	return r;
}

cJSON *rn_kube_skills_map(const struct rn_engine_params *p, cJSON *meta, cJSON **items, char *err,
			  size_t errlen)
{
	struct skills_walk w = { .data = cJSON_CreateObject(), .items = cJSON_CreateArray(),
				 .err = err, .errlen = errlen };
	int dfd = fg_open_dir(AT_FDCWD, p->skills_dir, 0), r;
	cJSON *o;

	r = dfd < 0 ? dfd : walk_dir(&w, dfd, "", 0);
	if (dfd < 0)
		rn__seterr(err, errlen, "skills dir '%s': %s", p->skills_dir, strerror(-dfd));
	else
		close(dfd);
	if (r) {
		cJSON_Delete(w.data);
		cJSON_Delete(w.items);
		cJSON_Delete(meta);
		return NULL;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "ConfigMap");
	cJSON_AddItemToObject(o, "metadata", meta);
	cJSON_AddItemToObject(o, "data", w.data);
	*items = w.items;
	return o;
}
