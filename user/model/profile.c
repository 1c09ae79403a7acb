// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The profile as data (model/profile.h): what every other file of the
 * model looks up in it. Reading it is profile_read.c's, checking it
 * profile_check.c's and profile_rate.c's.
 */
#include <string.h>

#include "model/profile.h"

void qos_profile_free(struct qos_profile *p)
{
	qos_rules_free(&p->rules);
}

const struct qos_class_spec *qos_profile_class(const struct qos_profile *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nclasses; i++)
		if (!strcmp(p->classes[i].name, name))
			return &p->classes[i];
	return NULL;
}
