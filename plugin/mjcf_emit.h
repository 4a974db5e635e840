/* Building blocks shared by the two MJCF emitters: the mocap-disk expansion
 * (loader.c) and the MuJoCo-native arm (native.c). */
#ifndef CUSP_MJCF_EMIT_H
#define CUSP_MJCF_EMIT_H

#include <libxml/tree.h>
#include <stddef.h>

#include "config.h"

/* Shortest text that reads back as v (never "-0"). */
void cusp_mjcf_num(char *buf, size_t n, double v);

/* A new child element with NULL-terminated name/value attribute pairs;
 * NULL when out of memory. */
xmlNodePtr cusp_mjcf_child(xmlNodePtr parent, const char *name, const char *const *attrs);

/* The root's first child element of that name, created when missing. */
xmlNodePtr cusp_mjcf_root_child(xmlNodePtr root, const char *name);

/* One <general> actuator NAME/COORD per actuated coordinate of c, ctrl =
 * generalized force: through the site `site` when it is not NULL, else
 * through the tendon of the same name. Returns 0, or -1 when out of memory. */
int cusp_mjcf_actuators(xmlNodePtr root, const cusp_instance_config *c, const char *site);

#endif
