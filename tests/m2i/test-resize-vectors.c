/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resize against other implementations: the vectors of
 * tests/data/resize/vectors.json, made by make-vectors.py with PyTorch's
 * F.interpolate, ONNX Runtime's Resize and Pillow's Image.resize (the script
 * says which of their settings is which Interpolate setting).
 *
 * Each case runs through the engine's tables and row kernels
 * (m2i_resize_image_rows) and through the direct spec evaluation
 * (m2i_resize_spec_image), for every Interpolate setting it is labelled
 * with:
 *  - fp32 data: within 1e-3 of the other implementation's fp32 result
 *    (data are 0..255; the vectors keep 4 decimals; PyTorch and ONNX Runtime
 *    compute weights in fp32 in their own order; a wrong pixel or weight
 *    is off by far more);
 *  - fp16 data: within one fp16 ulp of the expected value rounded to fp16,
 *    or within the fp32 tolerance (values near 0; pillow modes, whose horizontal pass is kept in fp16: within 0.15);
 *  - u8 data: equal to the expected value rounded by the mode's rule
 *    (resize-private.h), except by one where the expected value lies within
 *    1e-3 of the rounding boundary (not for the pillow modes, which also
 *    round and clamp between passes: see the next point);
 *  - Pillow's own 8-bit results ("u8" cases): within one (Pillow sums in
 *    fixed point, OpenVINO's reference in double), and equal for at least
 *    97% of the values.
 */
#include <m2i/resize-private.h>
#include <base/m2i-fp16.h>
#include <json-glib/json-glib.h>
#include <math.h>

#define TOL_F32 1e-3

typedef struct {
  gint cases, runs, values, u8_boundary, pillow_off_by_one, pillow_values;
  double max_f32_err;
} Stats;

static gboolean
params_from_json (JsonObject *a, gint out_w, gint out_h, M2iResizeParams *p)
{
  m2i_resize_params_init (p, out_w, out_h);
  if (!m2i_resize_mode_from_string (json_object_get_string_member (a, "mode"), &p->mode)
      || !m2i_coord_mode_from_string (json_object_get_string_member (a, "coord"), &p->coord)
      || !m2i_nearest_mode_from_string (json_object_get_string_member (a, "nearest"),
          &p->nearest))
    return FALSE;
  p->antialias = json_object_get_boolean_member (a, "antialias");
  p->cube_coeff = json_object_get_double_member (a, "cube_coeff");
  return TRUE;
}

static double
round_by_rule (const M2iResizePlan *plan, double v, double *boundary)
{
  v = CLAMP (v, 0.0, 255.0);
  if (plan->u8_round == M2I_RESIZE_ROUND_TRUNCATE) {
    *boundary = round (v);
    return trunc (v);
  }
  *boundary = floor (v) + 0.5;
  return round (v);
}

static void
run_case (JsonObject *cs, JsonObject *img, JsonObject *a, Stats *st, gboolean spec)
{
  gint h = json_object_get_int_member (img, "h"), w = json_object_get_int_member (img, "w");
  gint C = json_object_get_int_member (img, "c");
  gint oh = json_object_get_int_member (cs, "out_h"), ow = json_object_get_int_member (cs, "out_w");
  JsonArray *data = json_object_get_array_member (img, "data");
  JsonArray *expected = json_object_get_array_member (cs, "expected");
  const char *source = json_object_get_string_member (cs, "source");
  gboolean pillow_u8 = json_object_has_member (cs, "u8");
  gint n_in = h * w * C, n_out = oh * ow * C;
  g_assert_cmpint (json_array_get_length (data), ==, n_in);
  g_assert_cmpint (json_array_get_length (expected), ==, n_out);

  M2iResizeParams p;
  g_assert_true (params_from_json (a, ow, oh, &p));
  GError *err = NULL;
  M2iResizePlan *plan = m2i_resize_plan_new (&p, w, h, &err);
  g_assert_no_error (err);

  guint8 *u8 = g_new (guint8, n_in), *o8 = g_new (guint8, n_out);
  guint16 *f16 = g_new (guint16, n_in), *o16 = g_new (guint16, n_out);
  float *f32 = g_new (float, n_in), *o32 = g_new (float, n_out);
  for (gint i = 0; i < n_in; i++) {
    u8[i] = json_array_get_int_element (data, i);
    f32[i] = u8[i];
    f16[i] = m2i_f32_to_f16 (f32[i]);
  }
#define RUN(T, src, dst, es)                                                 \
  if (spec)                                                                  \
    g_assert_true (m2i_resize_spec_image (&p, w, h, T, C, src, w * C * es, dst, \
            ow * C * es, &err));                                             \
  else                                                                       \
    g_assert_true (m2i_resize_image_rows (plan, T, C, src, w * C * es, dst, ow * C * es, \
            0, oh, NULL, &err));                                             \
  g_assert_no_error (err)

  RUN (M2I_RESIZE_DATA_U8, u8, o8, 1);
  RUN (M2I_RESIZE_DATA_F16, f16, o16, 2);
  RUN (M2I_RESIZE_DATA_F32, f32, o32, 4);
  st->runs++;

  gchar *what = g_strdup_printf ("%s: %s %s %s aa=%d a=%g, %dx%d -> %dx%d (%s)", source,
      m2i_resize_mode_to_string (p.mode), m2i_coord_mode_to_string (p.coord),
      m2i_nearest_mode_to_string (p.nearest), p.antialias, p.cube_coeff, w, h, ow, oh,
      spec ? "spec evaluation" : "tables");
  for (gint i = 0; i < n_out; i++) {
    double e = json_array_get_double_element (expected, i);
    st->values++;
    if (pillow_u8) {
      gint d = abs ((gint) o8[i] - (gint) e);
      if (d > 1)
        g_error ("%s: value %d: u8 %u, Pillow %g", what, i, o8[i], e);
      st->pillow_off_by_one += d;
      st->pillow_values++;
      continue;
    }
    double err32 = fabs (o32[i] - e);
    st->max_f32_err = MAX (st->max_f32_err, err32);
    if (err32 > TOL_F32)
      g_error ("%s: value %d (y %d, x %d, c %d): fp32 %.6f, expected %.6f", what, i,
          i / (ow * C), i / C % ow, i % C, o32[i], e);
    /* Pillow modes keep the horizontal pass in fp16 (half an ulp of the
     * data, 1/16 below 256, times the filter mass 1.25, plus the final
     * rounding). */
    double tol16 = plan->round_intermediate ? 0.08 + 0.0625 : TOL_F32;
    if (m2i_f16_ulp_distance (o16[i], m2i_f32_to_f16 (e)) > 1
        && fabs (m2i_f16_to_f32 (o16[i]) - e) > tol16)
      g_error ("%s: value %d: fp16 %g, expected %g", what, i, m2i_f16_to_f32 (o16[i]), e);
    double boundary, r = round_by_rule (plan, e, &boundary);
    /* Pillow modes round and clamp the horizontal pass on u8, which the
     * fp32 vectors do not: their u8 results are checked against Pillow's
     * own 8-bit ones ("u8" cases) instead. */
    if (plan->round_intermediate)
      continue;
    if (o8[i] != r) {
      if (fabs (e - boundary) > TOL_F32 || fabs (o8[i] - r) > 1)
        g_error ("%s: value %d: u8 %u, expected %g rounds to %g", what, i, o8[i], e, r);
      st->u8_boundary++;
    }
  }
  g_free (what);
  g_free (u8);
  g_free (o8);
  g_free (f16);
  g_free (o16);
  g_free (f32);
  g_free (o32);
  m2i_resize_plan_free (plan);
}

static void
test_vectors (gconstpointer data)
{
  gboolean spec = GPOINTER_TO_INT (data);
  const char *dir = g_getenv ("M2I_TEST_DATA");
  if (dir == NULL) {
    g_test_skip ("M2I_TEST_DATA is not set (run through meson test)");
    return;
  }
  gchar *path = g_build_filename (dir, "resize", "vectors.json", NULL);
  JsonParser *parser = json_parser_new ();
  GError *err = NULL;
  g_assert_true (json_parser_load_from_file (parser, path, &err));
  g_assert_no_error (err);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *images = json_object_get_object_member (root, "images");
  JsonArray *cases = json_object_get_array_member (root, "cases");

  Stats st = { 0 };
  gint torch = 0, ort = 0, pil = 0;
  for (guint c = 0; c < json_array_get_length (cases); c++) {
    JsonObject *cs = json_array_get_object_element (cases, c);
    JsonObject *img = json_object_get_object_member (images,
        json_object_get_string_member (cs, "image"));
    JsonArray *labels = json_object_get_array_member (cs, "as");
    const char *source = json_object_get_string_member (cs, "source");
    torch += g_str_has_prefix (source, "torch");
    ort += g_str_has_prefix (source, "onnxruntime");
    pil += g_str_has_prefix (source, "Pillow");
    for (guint l = 0; l < json_array_get_length (labels); l++)
      run_case (cs, img, json_array_get_object_element (labels, l), &st, spec);
    st.cases++;
  }
  g_test_message ("%d cases (torch %d, onnxruntime %d, Pillow %d), %d runs, %d values; "
      "largest fp32 difference %.2g; %d u8 values on a rounding boundary; "
      "Pillow 8-bit: %d of %d values off by one", st.cases, torch, ort, pil, st.runs,
      st.values, st.max_f32_err, st.u8_boundary, st.pillow_off_by_one, st.pillow_values);
  /* Every source must be present, or the data file is not what we think. */
  g_assert_cmpint (torch, >=, 100);
  g_assert_cmpint (ort, >=, 300);
  g_assert_cmpint (pil, >=, 60);
  g_assert_cmpint (st.pillow_off_by_one * 100, <=, st.pillow_values * 3);
  g_object_unref (parser);
  g_free (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/resize-vectors/tables", GINT_TO_POINTER (FALSE), test_vectors);
  g_test_add_data_func ("/resize-vectors/spec", GINT_TO_POINTER (TRUE), test_vectors);
  return g_test_run ();
}
