/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-support.h — what the test folders share: where the data are, reading
 * them, the Fashion-MNIST test set, running a program, picking classes, and
 * a deterministic random sequence.
 *
 * Locations come from the meson test environment (tests/meson.build sets
 * them in one place): $M2I_TEST_DATA (tests/data), $M2I_MODELS_DIR
 * (models), $M2I_SHARED_MODELS (../shared/models/external, may be absent)
 * and $M2I_FASHION_MNIST_DIR (Debian's dataset-fashion-mnist, may be
 * absent). A static library (tests/support/meson.build) over GLib and
 * m2i-data; usable from GLib tests and gst-check tests alike (failures
 * abort the test program).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* $@var/@relative (free with g_free); NULL when @var is unset. */
gchar *test_env_path (const char *var, const char *relative);
gchar *test_shared_path (const char *relative);
gchar *test_models_path (const char *relative);
gchar *test_data_path (const char *relative);

/* $M2I_SHARED_MODELS/@relative when it exists (free with g_free); else NULL,
 * and a running GLib test (g_test_*) is marked skipped. */
gchar *test_shared_model (const char *relative);

/* tests/data/@relative, gunzipped when it is gzip (m2i_data_read); fails
 * the test when it cannot be read. */
GBytes *test_read_data (const char *relative);

/* Runs @program (a path; NULL fails the test) with the NULL-terminated
 * string arguments, waits, and returns its standard output (free with
 * g_free); its standard error into *@err, its wait status into *@status
 * (check with g_spawn_check_wait_status()). Fails the test when it cannot
 * be started. */
gchar *test_run_program (const char *program, gint *status, gchar **err, ...)
    G_GNUC_NULL_TERMINATED;

/* Index of the first largest of @n values. */
gint test_argmax (const float *p, gint n);

/* The indices of the @k largest of @n values, largest first (ties: the
 * lower index first); -1 past @n. */
void test_top_k (const float *p, gint n, gint k, gint *out);

/* ---- Fashion-MNIST -------------------------------------------------------- */

#define TEST_FM_SIDE 28
#define TEST_FM_PIXELS (TEST_FM_SIDE * TEST_FM_SIDE)
#define TEST_FM_T10K 10000
/* Why a test that needs the full test set skipped. */
#define TEST_FM_MISSING "no Fashion-MNIST test set in $M2I_FASHION_MNIST_DIR " \
  "(Debian package dataset-fashion-mnist)"

/* $M2I_FASHION_MNIST_DIR/@file when it exists (free with g_free), else NULL. */
gchar *test_fashion_mnist_path (const char *file);

/* The 10,000 test images (t10k-images-idx3-ubyte.gz), TEST_FM_T10K ×
 * TEST_FM_PIXELS bytes in dataset order; NULL when the data set is absent
 * (the caller skips, with TEST_FM_MISSING). Fails the test when the file is
 * there but malformed. Free with g_bytes_unref. */
GBytes *test_fashion_mnist_t10k (void);

/* The model input of a grey image, as tests/data/fashion-mnist/README.md
 * defines it (torch's transform): (p/255 − 0.2860)/0.3530 in f32, in that
 * order, into 3 planes of TEST_FM_PIXELS floats at @x. */
void test_fashion_mnist_input (const guint8 *image, float *x);

/* ---- the photo of a person ------------------------------------------------ */

/* tests/data/ir/astronaut-272x160.ppm (P6) scaled up 2× (each pixel to
 * 2×2) into 3 × 320 × 544 floats at @dst, BGR planes: the input of
 * person-detection-retail-0013. Fails the test when the file differs. */
void test_person_photo_bgr (float *dst);

/* ---- files and models ------------------------------------------------------ */

/* Removes folder @dir and everything in it; symbolic links are removed,
 * never followed. Absent is fine. */
void test_remove_dir (const char *dir);

/* The IR v11 text of a chain of @n layers of @op (opset1, <data>@data</data>
 * attributes text or ""), each on f32 [1,16], from a Parameter to a Result:
 * long models for the compiler's and the planner's bounds. *@len gets the
 * length. Free with g_free. */
gchar *test_chain_xml (const char *op, const char *data, gint n, gsize *len);

/* ---- random --------------------------------------------------------------- */

/* Marsaglia's xorshift32: the next value of @state (never 0 when it starts
 * non-zero). Deterministic, so failures reproduce. */
static inline guint32
test_xorshift32 (guint32 *state)
{
  *state ^= *state << 13;
  *state ^= *state >> 17;
  *state ^= *state << 5;
  return *state;
}

G_END_DECLS
