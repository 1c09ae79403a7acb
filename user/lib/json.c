// SPDX-License-Identifier: LGPL-2.1-or-later
#include <json-c/json.h>

#include "lib/json.h"

const char *qos_json_text(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}
