/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* permute.c — moving a tensor's elements into another order of its axes
 * (kernels-private.h, "Permutations"): Transpose, and the reshape →
 * transpose → reshape of DepthToSpace, SpaceToDepth, ShuffleChannels and
 * ReorgYolo.
 *
 * The plan drops unit axes and merges output axes that stay contiguous in
 * the input; one of them is then the input's contiguous axis (stride 1).
 * When it is the last, rows are copied whole; otherwise the copy goes by
 * blocks of that axis by the last one, read as a few sequential input rows
 * and written as one sequential output run (a depth-to-space's [.., W, 2]
 * output interleaves 2 input rows of W): no element is fetched with a
 * stride of the whole plane, no index arithmetic per element. 4-byte
 * elements with a longer last axis (a YOLO detect head's [3, H·W, 85]
 * output of [3, 85, H·W]) go by 16×16 tiles through AVX-512 registers
 * where the CPU has them, then 4×4 tiles through vector registers, each
 * output row written front to back. Rows, or blocks cut into chunks of
 * columns, are split over threads on large tensors.
 */
#include "kernels-private.h"

#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Columns of a block per chunk: 64 of each input row (85 rows: 21 KiB) and
 * the 64 output rows they make stay in L1. */
#define BLOCK 64

void
ir_k_perm_plan (IrKPerm *p, gint rank, const gint64 *in_dims, const gint *perm, gsize es)
{
  gint64 stride[IR_K_PERM_MAX_RANK], s = 1;
  for (gint a = rank - 1; a >= 0; a--) {
    stride[a] = s;
    s *= in_dims[a];
  }
  p->rank = 0;
  p->es = es;
  for (gint a = 0; a < rank; a++) {
    gint64 d = in_dims[perm[a]], st = stride[perm[a]];
    if (d == 1)
      continue;                        /* a unit axis moves nothing */
    if (p->rank && p->step[p->rank - 1] == st * d) {
      p->dims[p->rank - 1] *= d;       /* contiguous with the previous axis */
      p->step[p->rank - 1] = st;
      continue;
    }
    p->dims[p->rank] = d;
    p->step[p->rank++] = st;
  }
  if (p->rank == 0) {
    p->dims[0] = 1;
    p->step[0] = 1;
    p->rank = 1;
  }
  p->numel = 1;
  for (gint a = 0; a < p->rank; a++)
    p->numel *= p->dims[a];
  p->rows = p->numel ? p->numel / p->dims[p->rank - 1] : 0;
  /* The input's contiguous axis, when it is not the last (it is then). */
  p->unit = -1;
  for (gint a = 0; a < p->rank - 1; a++)
    if (p->step[a] == 1)
      p->unit = a;
  s = 1;
  for (gint a = p->rank - 1; a >= 0; a--) {
    p->out_stride[a] = s;
    s *= p->dims[a];
  }
  p->blocks = p->unit < 0 || !p->numel ? 0 : p->rows / p->dims[p->unit];
}

typedef struct {
  const IrKPerm *p;
  const guint8 *src;
  guint8 *dst;
} PermJob;

/* Input and output offsets (in elements) of index @r over the output axes
 * except @skip0 and @skip1 (-1: none), the last axis varying fastest. */
static void
offsets (const IrKPerm *p, gint64 r, gint skip0, gint skip1, gint64 *in, gint64 *out)
{
  gint64 i = 0, o = 0, rem = r;
  for (gint a = p->rank - 1; a >= 0; a--) {
    if (a == skip0 || a == skip1)
      continue;
    gint64 k = rem % p->dims[a];
    rem /= p->dims[a];
    i += k * p->step[a];
    o += k * p->out_stride[a];
  }
  *in = i;
  *out = o;
}

/* The last output axis is the input's contiguous one: whole rows. */
static void
perm_rows (gint begin, gint end, gint slice, gpointer data)
{
  const PermJob *j = data;
  const IrKPerm *p = j->p;
  gsize row = p->dims[p->rank - 1] * p->es;
  for (gint64 r = begin; r < end; r++) {
    gint64 in, out;
    offsets (p, r, p->rank - 1, -1, &in, &out);
    memcpy (j->dst + out * p->es, j->src + in * p->es, row);
  }
}

/* 4×4 tiles of 4-byte elements, moved through vector registers with GCC's
 * (or clang's) generic vector extension: four 16-byte loads, two rounds of
 * interleaving, four 16-byte stores — plain C for every target, SSE2
 * shuffles on x86-64. Integer lanes: the bits move untouched (NaNs too). */
typedef guint32 Vec4 __attribute__ ((vector_size (16)));
#if defined(__clang__)
#define SHUF4(a, b, i, j, k, l) __builtin_shufflevector (a, b, i, j, k, l)
#else
#define SHUF4(a, b, i, j, k, l) __builtin_shuffle (a, b, (Vec4) { i, j, k, l })
#endif

static inline void
tile4 (const guint32 *s, gint64 ss, guint32 *d, gint64 ds)
{
  Vec4 r0, r1, r2, r3;
  memcpy (&r0, s, 16);
  memcpy (&r1, s + ss, 16);
  memcpy (&r2, s + 2 * ss, 16);
  memcpy (&r3, s + 3 * ss, 16);
  Vec4 t0 = SHUF4 (r0, r1, 0, 4, 1, 5), t1 = SHUF4 (r0, r1, 2, 6, 3, 7);
  Vec4 t2 = SHUF4 (r2, r3, 0, 4, 1, 5), t3 = SHUF4 (r2, r3, 2, 6, 3, 7);
  Vec4 o0 = SHUF4 (t0, t2, 0, 1, 4, 5), o1 = SHUF4 (t0, t2, 2, 3, 6, 7);
  Vec4 o2 = SHUF4 (t1, t3, 0, 1, 4, 5), o3 = SHUF4 (t1, t3, 2, 3, 6, 7);
  memcpy (d, &o0, 16);
  memcpy (d + ds, &o1, 16);
  memcpy (d + 2 * ds, &o2, 16);
  memcpy (d + 3 * ds, &o3, 16);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "row-x86.h"
#define PERM_AVX512 __attribute__ ((target ("avx512f")))

/* A 16×16 tile with AVX-512: sixteen 64-byte loads, the transpose in
 * registers, sixteen 64-byte stores; the bits move untouched, as
 * tile4 (). */
static inline __attribute__ ((always_inline)) PERM_AVX512 void
tile16 (const guint32 *s, gint64 ss, guint32 *d, gint64 ds)
{
  __m512 r[16];
#pragma GCC unroll 16
  for (gint i = 0; i < 16; i++)
    r[i] = _mm512_castsi512_ps (_mm512_loadu_si512 (s + i * ss));
  ir_k_transpose16 (r);
#pragma GCC unroll 16
  for (gint i = 0; i < 16; i++)
    _mm512_storeu_si512 (d + i * ds, _mm512_castps_si512 (r[i]));
}

/* Columns [x0, x16) by rows [0, l16) of a block in 16×16 tiles. */
static PERM_AVX512 void
tiles16 (const guint32 *s, guint32 *d, gint64 x0, gint64 x16, gint64 l16, gint64 lstep,
    gint64 ox)
{
  for (gint64 x = x0; x < x16; x += 16)
    for (gint64 l = 0; l < l16; l += 16)
      tile16 (s + x + l * lstep, lstep, d + x * ox + l, ox);
}
#endif

/* Columns [x0, x1) of one block: output [x][..][l] = input [x + l·lstep]
 * for l < L (the last axis), x the unit axis (output stride ox). */
#define PERM_BLOCK(T) do { \
    const T *s_ = (const T *) j->src + in; \
    T *d_ = (T *) j->dst + out; \
    if (L == 2 && ox == 2) { \
      for (gint64 x = x0; x < x1; x++) { \
        d_[2 * x] = s_[x]; \
        d_[2 * x + 1] = s_[x + lstep]; \
      } \
      break; \
    } \
    for (gint64 l = l4; l < L; l++) \
      for (gint64 x = x0; x < x1; x++) \
        d_[x * ox + l] = s_[x + l * lstep]; \
    for (gint64 x = x4; x < x1; x++) \
      for (gint64 l = 0; l < l4; l++) \
        d_[x * ox + l] = s_[x + l * lstep]; \
  } while (0)

static void
perm_blocks (gint begin, gint end, gint slice, gpointer data)
{
  const PermJob *j = data;
  const IrKPerm *p = j->p;
  gint64 L = p->dims[p->rank - 1], lstep = p->step[p->rank - 1];
  gint64 X = p->dims[p->unit], ox = p->out_stride[p->unit];
  gint64 chunks = (X + BLOCK - 1) / BLOCK;
  for (gint64 r = begin; r < end; r++) {
    gint64 in, out, x0 = r % chunks * BLOCK, x1 = MIN (X, x0 + BLOCK);
    offsets (p, r / chunks, p->rank - 1, p->unit, &in, &out);
    /* 4-byte elements go by 16×16 tiles with AVX-512, then 4×4 tiles;
     * the rest (and the edges) one by one */
    gint64 l4 = 0, x4 = x0;
    if (p->es == 4 && !(L == 2 && ox == 2)) {
      const guint32 *s_ = (const guint32 *) j->src + in;
      guint32 *d_ = (guint32 *) j->dst + out;
      gint64 l16 = 0, x16 = x0;
#if defined(__x86_64__) && defined(__GNUC__)
      if (m2i_cpu_flags () & M2I_CPU_AVX512F) {
        l16 = L & ~(gint64) 15;
        x16 = x0 + ((x1 - x0) & ~(gint64) 15);
        tiles16 (s_, d_, x0, x16, l16, lstep, ox);
      }
#endif
      l4 = L & ~(gint64) 3;
      x4 = x0 + ((x1 - x0) & ~(gint64) 3);
      for (gint64 x = x0; x < x4; x += 4)
        for (gint64 l = x < x16 ? l16 : 0; l < l4; l += 4)
          tile4 (s_ + x + l * lstep, lstep, d_ + x * ox + l, ox);
    }
    switch (p->es) {
      case 1: PERM_BLOCK (guint8); break;
      case 2: PERM_BLOCK (guint16); break;
      case 4: PERM_BLOCK (guint32); break;
      default: PERM_BLOCK (guint64); break;
    }
  }
}

void
ir_k_perm_run (const M2iOpContext *ctx, const IrKPerm *p, gconstpointer src, gpointer dst)
{
  if (p->numel == 0)
    return;
  PermJob j = { p, src, dst };
  /* a moved element weighs like four multiply-adds */
  gint slices = ir_k_slices_for (ctx, p->numel * 4);
  /* blocks are split into chunks of BLOCK columns: a few large blocks
   * (a detect head's [3, H·W, 85]) still share out over threads */
  if (p->unit >= 0)
    ir_k_parallel_for ((gint) (p->blocks * ((p->dims[p->unit] + BLOCK - 1) / BLOCK)), slices, 1,
        perm_blocks, &j);
  else
    ir_k_parallel_for ((gint) p->rows, slices, 1, perm_rows, &j);
}
