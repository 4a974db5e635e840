/* The 20 problems of the peer LCP set (tests/data/lcp, a copy of
 * ../shared/reference/lcp), shared by the peer test and the benchmark. */
#ifndef CUSP_PEER_SET_H
#define CUSP_PEER_SET_H

static const char *const peer_files[] = {
  "lcp_CPS_1.dat", "lcp_CPS_2.dat", "lcp_CPS_3.dat", "lcp_CPS_4.dat", "lcp_CPS_4bis.dat",
  "lcp_CPS_5.dat", "lcp_Pang_isolated_sol.dat", "lcp_Pang_isolated_sol_perturbed.dat",
  "lcp_deudeu.dat", "lcp_deudeu_block.dat", "lcp_enum_fails.dat", "lcp_exp_murty.dat",
  "lcp_exp_murty2.dat", "lcp_inf_sol_perturbed.dat", "lcp_mmc.dat", "lcp_ortiz.dat",
  "lcp_ortiz_block.dat", "lcp_tobenna.dat", "lcp_trivial.dat", "lcp_trivial_block.dat",
};
#define PEER_NFILES ((int)(sizeof peer_files / sizeof peer_files[0]))

#endif
