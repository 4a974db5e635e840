/* Wider vector units where the CPU has them, chosen at load time. */
#ifndef SB_VECTOR_H
#define SB_VECTOR_H

/* SB_WIDE_CLONES before a function compiles it twice on x86-64, for the
 * baseline (SSE2) and for AVX2, and the dynamic loader picks the one the
 * CPU runs (an ifunc): the library still loads and runs on any x86-64
 * machine, no build flag needed. Without -ffast-math (and with ISO C's
 * -ffp-contract=off: no fused multiply-adds, and AVX2 alone does not enable
 * FMA) the compiler vectorizes only what keeps every operation and its order,
 * so both clones compute the same doubles; AVX2 does four lanes where SSE2
 * does two. Elsewhere (another architecture, or a compiler without
 * target_clones) it is nothing. */
/* SB_NO_WIDE_CLONES (-DSB_NO_WIDE_CLONES): the baseline only, to compare. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SB_NO_WIDE_CLONES)
#define SB_WIDE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SB_WIDE_CLONES
#endif

/* Helpers of a cloned function: inlined into each clone, so that they are
 * compiled for its instruction set too. */
#if defined(__GNUC__)
#define SB_CLONE_INLINE static inline __attribute__((always_inline))
#else
#define SB_CLONE_INLINE static inline
#endif

/* Four doubles, lane by lane (GCC's vector extension): one AVX register, or
 * two SSE2 ones in the baseline clone. */
typedef double sb_v4d __attribute__((vector_size(32)));

#endif
