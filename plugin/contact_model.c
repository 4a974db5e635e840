#include "contact_model.h"

/* Explicit models first: their forces enter the soft step that the
 * implicit ones solve with. */
const cusp_contact_model cusp_contact_models[] = {
    {CUSP_CONTACT_PENALTY, "penalty", cusp_penalty_forces, NULL},
    {CUSP_CONTACT_LCP, "lcp", NULL, cusp_lcp_impulses},
    {CUSP_CONTACT_SAP, "sap", NULL, cusp_sap_impulses},
    {CUSP_CONTACT_NCP, "ncp", NULL, cusp_ncp_impulses},
    {0, NULL, NULL, NULL},
};
