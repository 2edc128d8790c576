/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-image.c — see test-image.h. */
#include "test-image.h"

#include <string.h>

void
test_image_alloc (TestImage *t, M2iFormat f, gint w, gint h)
{
  t->size = m2i_image_wrap_size (f, w, h, 0);
  t->mem = g_malloc0 (t->size);
  g_assert_true (m2i_image_wrap (&t->img, f, w, h, t->mem, t->size, 0, NULL));
}

void
test_image_alloc_padded (TestImage *t, M2iFormat f, gint w, gint h, gsize pad, guint8 fill)
{
  gsize rb;
  g_assert_true (m2i_format_plane_geometry (f, w, h, 0, &rb, NULL));
  gsize stride = rb + pad * m2i_format_bytes_per_sample (f);
  t->size = m2i_image_wrap_size (f, w, h, stride);
  g_assert_cmpuint (t->size, >, 0);
  t->mem = g_malloc (t->size);
  memset (t->mem, fill, t->size);
  g_assert_true (m2i_image_wrap (&t->img, f, w, h, t->mem, t->size, stride, NULL));
}

void
test_image_free (TestImage *t)
{
  g_free (t->mem);
  memset (t, 0, sizeof *t);
}
