// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Linked into the in-tree qosctl only, the one the tests, the demo and the
 * benchmarks run: the source tree's profiles as the last profile directory
 * (see qos_profile_find()). The installed qosctl is linked without it and
 * knows only the installed paths.
 */
#include "model/profile_path.h"

const char qos_tree_profile_dir[] = QOS_TREE_PROFILE_DIR;
