/*
 * isolation.c - the isolation object (see forge/isolation.h).
 */
#include "forge/isolation.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge/json.h"
#include "forge/util.h"

static const struct {
	unsigned bit;
	const char *name;
} SCOPES[] = {
	{ FG_SCOPE_SIGNAL, "signal" },
	{ FG_SCOPE_ABSTRACT_UNIX_SOCKET, "abstract_unix_socket" },
};

struct cJSON *fg_isolation_to_cjson(const struct fg_isolation *iso)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	if (!o)
		abort();
	cJSON_AddStringToObject(o, "mechanism", iso->landlock ? "landlock" : "none");
	cJSON_AddNumberToObject(o, "abi", iso->abi);
	arr = cJSON_AddArrayToObject(o, "scoped");
	for (size_t i = 0; arr && i < ARRAY_SIZE(SCOPES); i++)
		if (iso->scoped & SCOPES[i].bit)
			cJSON_AddItemToArray(arr, cJSON_CreateString(SCOPES[i].name));
	cJSON_AddNumberToObject(o, "agent_uid", (double)iso->agent_uid);
	cJSON_AddBoolToObject(o, "root_dropped", iso->root_dropped);
	if (!iso->landlock)
		cJSON_AddStringToObject(o, "reason", iso->reason);
	return o;
}

static unsigned scope_bits(const cJSON *arr)
{
	const cJSON *v;
	unsigned bits = 0;

	cJSON_ArrayForEach(v, arr)
		for (size_t i = 0; cJSON_IsString(v) && i < ARRAY_SIZE(SCOPES); i++)
			if (!strcmp(v->valuestring, SCOPES[i].name))
				bits |= SCOPES[i].bit;
	return bits;
}

int fg_isolation_from_cjson(struct fg_isolation *iso, const cJSON *o)
{
	const cJSON *m = fg_json_get(o, "mechanism");
	const cJSON *abi = fg_json_get(o, "abi");
	const cJSON *uid = fg_json_get(o, "agent_uid");
	const cJSON *why = fg_json_get(o, "reason");
	struct fg_isolation t;

	if (!cJSON_IsObject(o) || !cJSON_IsString(m) || !cJSON_IsNumber(abi) || !isfinite(abi->valuedouble) ||
	    abi->valuedouble < 0 || abi->valuedouble > 1000)
		return -EINVAL;
	if (strcmp(m->valuestring, "landlock") && strcmp(m->valuestring, "none"))
		return -EINVAL;
	memset(&t, 0, sizeof(t));
	t.known = true;
	t.landlock = !strcmp(m->valuestring, "landlock");
	t.abi = (int)abi->valuedouble;
	t.scoped = scope_bits(fg_json_get(o, "scoped"));
	t.agent_uid = cJSON_IsNumber(uid) && isfinite(uid->valuedouble) && uid->valuedouble >= 0 &&
		      uid->valuedouble < 4294967296.0 ? (long)uid->valuedouble : -1;
	t.root_dropped = fg_json_true(o, "root_dropped");
	if (cJSON_IsString(why))
		snprintf(t.reason, sizeof(t.reason), "%s", why->valuestring);
	*iso = t;
	return 0;
}

struct cJSON *fg_isolation_to_fields(const struct fg_isolation *iso)
{
	cJSON *o = fg_isolation_to_cjson(iso);
	char names[128];

	fg_isolation_scope_names(iso->scoped, names, sizeof(names));
	cJSON_ReplaceItemInObjectCaseSensitive(o, "scoped", cJSON_CreateString(names));
	cJSON_ReplaceItemInObjectCaseSensitive(o, "root_dropped", cJSON_CreateNumber(iso->root_dropped));
	return o;
}

int fg_isolation_from_fields(struct fg_isolation *iso, const cJSON *o)
{
	const cJSON *sc = fg_json_get(o, "scoped");
	const cJSON *rd = fg_json_get(o, "root_dropped");
	cJSON *c = cJSON_Duplicate(o, 1), *arr = cJSON_CreateArray();
	int rc;

	if (!c || !arr)
		abort();
	for (const char *p = cJSON_IsString(sc) ? sc->valuestring : ""; *p;) {
		size_t n = strcspn(p, ",");

		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), p);
		cJSON_AddItemToArray(arr, cJSON_CreateString(name));
		p += n + (p[n] == ',');
	}
	cJSON_DeleteItemFromObjectCaseSensitive(c, "scoped");
	cJSON_AddItemToObject(c, "scoped", arr);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "root_dropped");
	cJSON_AddBoolToObject(c, "root_dropped", cJSON_IsNumber(rd) && rd->valuedouble != 0);
	rc = fg_isolation_from_cjson(iso, c);
	cJSON_Delete(c);
	return rc;
}

void fg_isolation_scope_names(unsigned bits, char *buf, size_t n)
{
	size_t o = 0;

	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(SCOPES) && o < n; i++)
		if (bits & SCOPES[i].bit)
			o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? "," : "", SCOPES[i].name);
}
