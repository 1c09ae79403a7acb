// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "lib/names.h"

bool qos_name_ok(const char *s, size_t max)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-";
	size_t n = strlen(s);

	if (max > QOS_NAME_MAX)
		max = QOS_NAME_MAX;
	return n && n <= max && strspn(s, ok) == n;
}

const char *qos_esc(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = *s;
		char e[4];
		size_t n;

		if (c == '\\') {
			memcpy(e, "\\\\", 2);
			n = 2;
		} else if (c >= 0x20 && c < 0x7f) {
			e[0] = c;
			n = 1;
		} else {
			e[0] = '\\';
			e[1] = 'x';
			e[2] = hex[c >> 4];
			e[3] = hex[c & 15];
			n = 4;
		}
		if (o + n >= len)
			break;
		memcpy(buf + o, e, n);
		o += n;
	}
	if (len)
		buf[o] = '\0';
	return buf;
}

void qos_fputs_printable(const char *s, FILE *f)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
}

void qos_prom_escape(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}
