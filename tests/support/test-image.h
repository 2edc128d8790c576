/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-image.h — an owned M2iImage for tests (engine and element tests):
 * tight, or with padded rows. Needs libm2icore's public API (either the
 * static archive or the shared library). */
#pragma once

#include <m2i-core/m2i/m2i.h>

G_BEGIN_DECLS

typedef struct {
  M2iImage img;                  /* its planes point into mem */
  guint8 *mem;
  gsize size;
} TestImage;

/* A tight @w x @h image of format @f, zero-filled. */
void test_image_alloc (TestImage *t, M2iFormat f, gint w, gint h);

/* An image whose rows are @pad samples longer than needed, every byte
 * (padding included) set to @fill. */
void test_image_alloc_padded (TestImage *t, M2iFormat f, gint w, gint h, gsize pad,
    guint8 fill);

void test_image_free (TestImage *t);

G_END_DECLS
