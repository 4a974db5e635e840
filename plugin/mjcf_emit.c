#include "mjcf_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cusp_mjcf_num(char *buf, size_t n, double v) {
  if (v == 0) v = 0; /* no "-0" */
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) return;
  }
}

xmlNodePtr cusp_mjcf_child(xmlNodePtr parent, const char *name, const char *const *attrs) {
  xmlNodePtr e = xmlNewChild(parent, NULL, (const xmlChar *)name, NULL);
  for (int i = 0; e && attrs[i]; i += 2)
    if (!xmlSetProp(e, (const xmlChar *)attrs[i], (const xmlChar *)attrs[i + 1])) return NULL;
  return e;
}

xmlNodePtr cusp_mjcf_root_child(xmlNodePtr root, const char *name) {
  for (xmlNodePtr n = root->children; n; n = n->next)
    if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)name)) return n;
  return xmlNewChild(root, NULL, (const xmlChar *)name, NULL);
}

int cusp_mjcf_actuators(xmlNodePtr root, const cusp_instance_config *c, const char *site) {
  int nact = 0;
  for (int i = 0; i < c->ncoord; i++) nact += c->actuated[i];
  if (nact == 0) return 0;
  xmlNodePtr act = cusp_mjcf_root_child(root, "actuator");
  if (!act) return -1;
  char name[CUSP_NAME + 32], gear[64], range[72], lo[32], hi[32];
  cusp_mjcf_num(gear, sizeof gear, c->gear);
  strcat(gear, " 0 0 0 0 0");
  cusp_mjcf_num(lo, sizeof lo, c->ctrlrange[0]);
  cusp_mjcf_num(hi, sizeof hi, c->ctrlrange[1]);
  snprintf(range, sizeof range, "%s %s", lo, hi);
  for (int i = 0; i < c->ncoord; i++) {
    if (!c->actuated[i]) continue;
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    /* explicit gain and bias: scene defaults cannot change actuator_force = ctrl */
    const char *aattrs[] = {"name",    name,          site ? "site" : "tendon", site ? site : name, "gear",
                            gear,      "ctrllimited", "true",     "ctrlrange", range,
                            "dyntype", "none",        "gaintype", "fixed",     "gainprm",
                            "1",       "biastype",    "none",     NULL};
    if (!cusp_mjcf_child(act, "general", aattrs)) return -1;
  }
  return 0;
}
