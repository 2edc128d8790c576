/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-test-util.h — helpers shared by the M2I engine tests: owned test
 * images with optional row padding, deterministic random content, and
 * comparisons (u8 exact, fp16 within an ulp budget). */
#pragma once

#include <m2i/m2i.h>
#include <test-image.h>
#include <test-support.h>
#include <base/m2i-error.h>
#include <string.h>

/* Fills every byte of a u8 image (padding included) from @rand. */
static inline void
test_image_randomize (TestImage *t, GRand *rand)
{
  for (gsize i = 0; i < t->size; i++)
    t->mem[i] = (guint8) g_rand_int (rand);
}

/* A smooth-ish YUV picture (gradients plus noise) so resizes see structure. */
static inline void
test_image_pattern (TestImage *t, GRand *rand)
{
  const M2iImage *im = &t->img;
  guint32 noise = g_rand_int (rand) | 1;      /* xorshift: 8K frames need speed */
  for (guint p = 0; p < m2i_format_n_planes (im->format); p++) {
    gsize rb;
    gint rows;
    m2i_format_plane_geometry (im->format, im->width, im->height, p, &rb, &rows);
    for (gint y = 0; y < rows; y++)
      for (gsize x = 0; x < rb; x++) {
        test_xorshift32 (&noise);
        im->data[p][y * im->stride[p] + x] =
            (guint8) ((x * (3 + p) + (gsize) y * (5 - p) + noise % 24) & 0xff);
      }
  }
}

/* Largest difference between two images of the same geometry: |a-b| for u8,
 * ulps for fp16, and for fp32 the absolute difference scaled by 1e6. Only
 * the image area is compared, never padding. */
static inline guint
test_image_max_diff (const M2iImage *a, const M2iImage *b)
{
  g_assert_cmpint (a->format, ==, b->format);
  guint worst = 0;
  M2iDataType dt = m2i_format_dtype (a->format);
  for (guint p = 0; p < m2i_format_n_planes (a->format); p++) {
    gsize rb;
    gint rows;
    m2i_format_plane_geometry (a->format, a->width, a->height, p, &rb, &rows);
    for (gint y = 0; y < rows; y++) {
      const guint8 *ra = a->data[p] + y * a->stride[p];
      const guint8 *rb_ = b->data[p] + y * b->stride[p];
      if (dt == M2I_DTYPE_U8) {
        for (gsize x = 0; x < rb; x++)
          worst = MAX (worst, (guint) ABS ((int) ra[x] - (int) rb_[x]));
      } else if (dt == M2I_DTYPE_F16) {
        for (gsize x = 0; x < rb / 2; x++) {
          m2i_f16 ha = ((const m2i_f16 *) ra)[x], hb = ((const m2i_f16 *) rb_)[x];
          if (ha == hb)
            continue;
          if ((ha ^ hb) & 0x8000)      /* sign differs: count through zero */
            worst = MAX (worst, (guint) ((ha & 0x7fff) + (hb & 0x7fff)));
          else
            worst = MAX (worst, m2i_f16_ulp_distance (ha, hb));
        }
      } else {
        for (gsize x = 0; x < rb / 4; x++) {
          float fa = ((const float *) ra)[x], fb = ((const float *) rb_)[x];
          double d = ABS ((double) fa - (double) fb) * 1e6;
          worst = MAX (worst, (guint) MIN (d, 1e9));
        }
      }
    }
  }
  return worst;
}

/* Checks that bytes outside the image area of @t still hold @fill. */
static inline gboolean
test_image_padding_intact (const TestImage *t, guint8 fill)
{
  const M2iImage *im = &t->img;
  for (guint p = 0; p < m2i_format_n_planes (im->format); p++) {
    gsize rb;
    gint rows;
    m2i_format_plane_geometry (im->format, im->width, im->height, p, &rb, &rows);
    for (gint y = 0; y < rows; y++)
      for (gsize x = rb; x < im->stride[p]; x++)
        if (im->data[p][y * im->stride[p] + x] != fill)
          return FALSE;
  }
  return TRUE;
}
