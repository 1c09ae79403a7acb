// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the reservation file of `qosctl reserve apply`
 * (qos_reserve_file_parse(), user/model/reserve.c): the input is the file,
 * parsed by json-c as the command does, then every request read and its
 * rule checked. Nothing touches a device. Seeds: fuzz/seeds.h writes a few
 * files; fuzz/reserve.dict holds the keys.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "model/reserve.h"
#include "seeds.h"

static const char *const seeds[] = {
	"{\"reservations\": [{\"dev\": \"eth1\", \"id\": \"r1\", \"rate\": \"2mbit\", "
	"\"src\": \"2001:db8::/64\", \"dst\": \"2001:db8:1::1\", \"flowlabel\": \"0x12345\", "
	"\"for\": \"2h\"}]}",
	"[{\"dev\": \"eth1\", \"rate\": \"10mbit\", \"burst\": \"16kb\", \"proto\": \"udp\", "
	"\"dst\": \"192.0.2.0/24\", \"dport\": \"5000-5010\"}, {\"dev\": \"eth2\", \"id\": 7, "
	"\"rate\": \"1mbit\", \"src\": \"10.0.0.1\", \"for\": \"30s\"}]",
	"{\"reservations\": []}",
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char name[16];
	size_t i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		snprintf(name, sizeof(name), "reserve-%zu", i);
		fuzz_seed(name, seeds[i], strlen(seeds[i]));
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct qos_reserve_req *qs;
	const char **devs, *key;
	json_object *root;
	char err[512];
	size_t n, i;

	if (!tok)
		abort();
	root = json_tokener_parse_ex(tok, (const char *)data, (int)(size > 1 << 20 ? 1 << 20 : size));
	json_tokener_free(tok);
	if (!root)
		return 0;
	if (!qos_reserve_file_parse(root, "fuzz.json", &qs, &devs, &n, err, sizeof(err))) {
		for (i = 0; i < n; i++)
			if (!devs[i] || qos_rule_check(&qs[i].r, &key, err, sizeof(err)) > 0)
				abort();
		free(qs);
		free(devs);
	}
	json_object_put(root);
	return 0;
}
