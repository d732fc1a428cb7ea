/*
 * denied.c - tools an agent was refused, per role (see denied.h).
 */
#include "forge/denied.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"

void fg_denied_init(struct fg_denied *d)
{
	fg_strvec_init(&d->worker);
	fg_strvec_init(&d->reviewer);
}

void fg_denied_release(struct fg_denied *d)
{
	fg_strvec_release(&d->worker);
	fg_strvec_release(&d->reviewer);
	fg_denied_init(d);
}

bool fg_denied_empty(const struct fg_denied *d)
{
	return d->worker.n == 0 && d->reviewer.n == 0;
}

bool fg_denied_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > FG_DENIED_NAME_MAX)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:*()-") == n;
}

bool fg_denied_add(struct fg_strvec *v, const char *name)
{
	if (!fg_denied_name_ok(name))
		return false;
	if (fg_strvec_has(v, name))
		return true;
	if (v->n >= FG_DENIED_MAX)
		return false;
	fg_strvec_push(v, name);
	return true;
}

void fg_denied_merge(struct fg_strvec *dst, const struct fg_strvec *src)
{
	for (size_t i = 0; i < src->n; i++)
		fg_denied_add(dst, src->v[i]);
}

void fg_denied_join(const struct fg_strvec *v, struct fg_buf *b)
{
	for (size_t i = 0; i < v->n; i++)
		fg_buf_addf(b, "%s%s", i ? ", " : "", v->v[i]);
}

cJSON *fg_denied_array(const struct fg_strvec *v)
{
	cJSON *a = cJSON_CreateArray();

	if (!a)
		abort();
	for (size_t i = 0; i < v->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v->v[i]));
	return a;
}

void fg_denied_add_to(cJSON *o, const struct fg_denied *d)
{
	cJSON *t;

	if (fg_denied_empty(d))
		return;
	t = fg_json_add_object(o, "denied_tools");
	if (d->worker.n)
		cJSON_AddItemToObject(t, "worker", fg_denied_array(&d->worker));
	if (d->reviewer.n)
		cJSON_AddItemToObject(t, "reviewer", fg_denied_array(&d->reviewer));
}

void fg_denied_read_array(struct fg_strvec *v, const cJSON *a)
{
	const cJSON *e;

	if (!cJSON_IsArray(a))
		return;
	cJSON_ArrayForEach(e, a)
		if (cJSON_IsString(e))
			fg_denied_add(v, e->valuestring);
}

void fg_denied_from(struct fg_denied *d, const cJSON *o)
{
	const cJSON *t = fg_json_obj(o, "denied_tools");

	/* Without the member, t is NULL and so is each array: both left empty. */
	fg_denied_release(d);
	fg_denied_read_array(&d->worker, fg_json_get(t, "worker"));
	fg_denied_read_array(&d->reviewer, fg_json_get(t, "reviewer"));
}
