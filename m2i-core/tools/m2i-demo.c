/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-demo — runs the M2I engine on a real photo and shows what it did.
 *
 * Reads an NV12 frame (default: tests/data/m2i/chelsea-450x300.nv12, made
 * from scikit-image's public-domain chelsea.png), plans
 * csc -> convertU8F16 -> resize(224x224) -> norm -> permute under both
 * hardware profiles, prints each plan, runs the fused and the reference path,
 * and prints checksums, first values, the largest difference between the
 * paths, the device counters and timings. Writes two pictures (PPM):
 * the full frame as RGB and the 224x224 resize (into the build directory
 * unless -o says otherwise).
 *
 * Usage: m2i-demo [FRAME.nv12 WIDTH HEIGHT] [-o OUTDIR]
 */
#include <m2i-core/m2i-core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M2I_DEMO_OUTDIR
#define M2I_DEMO_OUTDIR "."
#endif
#ifndef M2I_DEMO_DATA
#define M2I_DEMO_DATA "tests/data/m2i/chelsea-450x300.nv12"
#endif

static guint32
fnv1a (const guint8 *p, gsize n)
{
  guint32 h = 2166136261u;
  for (gsize i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

static gboolean
write_ppm (const char *path, const M2iImage *img, GError **error)
{
  GString *s = g_string_new (NULL);
  g_string_printf (s, "P6\n%d %d\n255\n", img->width, img->height);
  for (gint y = 0; y < img->height; y++)
    g_string_append_len (s, (const char *) img->data[0] + y * img->stride[0], img->width * 3);
  gboolean ok = g_file_set_contents (path, s->str, (gssize) s->len, error);
  g_string_free (s, TRUE);
  return ok;
}

static double
time_runs (M2iPlan *plan, const M2iImage *in, M2iImage *out, int n)
{
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < n; i++)
    if (!m2i_plan_run (plan, in, out, NULL))
      return -1;
  return (double) (g_get_monotonic_time () - t0) / n;
}

static int
fail (GError *err)
{
  fprintf (stderr, "m2i-demo: %s\n", err->message);
  g_error_free (err);
  return 1;
}

int
main (int argc, char **argv)
{
  const char *path = M2I_DEMO_DATA, *outdir = M2I_DEMO_OUTDIR;
  gint w = 450, h = 300;
  int pos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "-o") && i + 1 < argc)
      outdir = argv[++i];
    else if (pos == 0 && ++pos)
      path = argv[i];
    else if (pos == 1 && ++pos)
      w = atoi (argv[i]);
    else if (pos == 2 && ++pos)
      h = atoi (argv[i]);
  }
  GError *err = NULL;
  gchar *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, &err))
    return fail (err);
  M2iImage in;
  if (!m2i_image_wrap (&in, M2I_FORMAT_SP_NV12_8, w, h, data, len, 0, &err))
    return fail (err);
  printf ("input: %s, NV12 %dx%d (%" G_GSIZE_FORMAT " bytes); CPU: %s\n\n", path, w, h, len,
      m2i_cpu_flags_string ());

  /* The preprocessing of an ImageNet classifier. */
  M2iOpList ops;
  M2iResizeParams rp;
  M2iNormParams norm;
  const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
  m2i_resize_params_init (&rp, 224, 224);
  rp.mode = M2I_RESIZE_LINEAR;
  rp.coord = M2I_COORD_HALF_PIXEL;
  m2i_norm_params_from_mean_std (&norm, mean, std, 1.0f / 255.0f);
  m2i_op_list_init (&ops);
  m2i_op_list_add_csc (&ops, M2I_ORDER_RGB);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F16);
  m2i_op_list_add_resize (&ops, &rp);
  m2i_op_list_add_norm (&ops, &norm);
  m2i_op_list_add_permute (&ops);
  gchar *desc = m2i_op_list_to_string (&ops);
  printf ("ops: %s\n", desc);
  g_free (desc);

  gsize tsize = m2i_image_wrap_size (M2I_FORMAT_PL_FP16_RGB, 224, 224, 0);
  guint8 *tbuf = g_malloc0 (tsize), *rbuf = g_malloc0 (tsize);
  M2iImage out, ref;
  m2i_image_wrap (&out, M2I_FORMAT_PL_FP16_RGB, 224, 224, tbuf, tsize, 0, NULL);
  m2i_image_wrap (&ref, M2I_FORMAT_PL_FP16_RGB, 224, 224, rbuf, tsize, 0, NULL);

  gint64 t0 = g_get_monotonic_time ();
  if (!m2i_reference_run (&in, &ops, &ref, &err))
    return fail (err);
  double ref_us = (double) (g_get_monotonic_time () - t0);

  M2iDevice *dev = m2i_device_get_default ();
  for (int prof = 0; prof < 2; prof++) {
    M2iPlanOptions o = { prof, 1 };
    M2iPlan *plan = m2i_plan_new (&in, &ops, &out, &o, &err);
    if (!plan)
      return fail (err);
    gchar *pd = m2i_plan_to_string (plan);
    printf ("\nprofile %s: %u task(s)\n%s\n", m2i_profile_to_string (prof),
        m2i_plan_n_tasks (plan), pd);
    g_free (pd);
    M2iDeviceCounters c0, c1;
    m2i_device_get_counters (dev, &c0);
    if (!m2i_plan_run (plan, &in, &out, &err))
      return fail (err);
    m2i_device_get_counters (dev, &c1);
    printf ("one run: %" G_GUINT64_FORMAT " tasks (%" G_GUINT64_FORMAT " device, %"
        G_GUINT64_FORMAT " CPU), %" G_GUINT64_FORMAT " B read, %" G_GUINT64_FORMAT
        " B written, %" G_GUINT64_FORMAT " simulated cycles (%.1f us at %g GHz)\n",
        c1.tasks_total - c0.tasks_total, c1.tasks_device - c0.tasks_device,
        c1.tasks_cpu - c0.tasks_cpu, c1.bytes_read - c0.bytes_read,
        c1.bytes_written - c0.bytes_written, c1.cycles - c0.cycles,
        (double) (c1.cycles - c0.cycles) / (M2I_DEVICE_CLOCK_HZ / 1e6),
        M2I_DEVICE_CLOCK_HZ / 1e9);
    guint maxd = 0;
    for (gsize i = 0; i < tsize / 2; i++) {
      m2i_f16 a = ((m2i_f16 *) tbuf)[i], b = ((m2i_f16 *) rbuf)[i];
      if (a != b)
        maxd = MAX (maxd, ((a ^ b) & 0x8000) ? (guint) (a & 0x7fff) + (b & 0x7fff)
            : m2i_f16_ulp_distance (a, b));
    }
    const m2i_f16 *t = (const m2i_f16 *) tbuf;
    printf ("PL_FP16_RGB 224x224: fnv1a %08x; R[0..3] = %.4f %.4f %.4f %.4f; "
        "G[0] = %.4f; B[0] = %.4f\n", fnv1a (tbuf, tsize),
        m2i_f16_to_f32 (t[0]), m2i_f16_to_f32 (t[1]), m2i_f16_to_f32 (t[2]),
        m2i_f16_to_f32 (t[3]), m2i_f16_to_f32 (t[224 * 224]), m2i_f16_to_f32 (t[2 * 224 * 224]));
    printf ("fused vs reference: max difference %u fp16 ulp\n", maxd);
    printf ("time per frame: fused %.1f us (1 thread), reference %.1f us\n",
        time_runs (plan, &in, &out, 200), ref_us);
    m2i_plan_free (plan);
  }

  /* Pictures: the frame as RGB, and the 224x224 resize. */
  for (int k = 0; k < 2; k++) {
    gint ow = k ? 224 : w, oh = k ? 224 : h;
    gsize sz = m2i_image_wrap_size (M2I_FORMAT_IL_RGB888, ow, oh, 0);
    guint8 *buf = g_malloc (sz);
    M2iImage rgb;
    m2i_image_wrap (&rgb, M2I_FORMAT_IL_RGB888, ow, oh, buf, sz, 0, NULL);
    m2i_op_list_init (&ops);
    m2i_op_list_add_csc (&ops, M2I_ORDER_RGB);
    if (k)
      m2i_op_list_add_resize (&ops, &rp);
    M2iPlan *plan = m2i_plan_new (&in, &ops, &rgb, NULL, &err);
    if (!plan || !m2i_plan_run (plan, &in, &rgb, &err))
      return fail (err);
    gchar *pd = m2i_plan_to_string (plan);
    gchar *file = g_build_filename (outdir, k ? "m2i-demo-224.ppm" : "m2i-demo-rgb.ppm", NULL);
    if (!write_ppm (file, &rgb, &err))
      return fail (err);
    printf ("\n%s\nwrote %s (IL_RGB888 %dx%d, fnv1a %08x)\n", pd, file, ow, oh, fnv1a (buf, sz));
    g_free (pd);
    g_free (file);
    m2i_plan_free (plan);
    g_free (buf);
  }
  g_free (tbuf);
  g_free (rbuf);
  g_free (data);
  return 0;
}
