/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The session's own fitting of a frame (M2iInferPreprocess.resize_type:
 * letterbox, fit to window, crop) and the model's metadata as defaults
 * (m2i_infer_settings_resolve), without GStreamer.
 *
 * A model written here copies its f32 input to its output, so the output is
 * what the session fed: the picture must equal the reference path's resize
 * of the frame (or of its centre), the padding the pad value, placed where
 * Ultralytics' LetterBox rule (written out here) puts it; the result's
 * geometry must map the corners back to the frame. */
#include "infer-test-util.h"

#include <glib/gstdio.h>
#include <math.h>

#define MS 16                       /* the copy model's input: 16 x 16 */

/* A model copying its input "image" (f32 [1,3,MS,MS]) to "copy", with
 * @rt_info (a <rt_info> element's contents, or ""). The .xml path. */
static gchar *
write_copy_model (const char *dir, const char *name, const char *rt_info)
{
  const char *dd = "<dim>1</dim><dim>3</dim><dim>16</dim><dim>16</dim>";
  gchar *xml = g_strdup_printf ("<?xml version=\"1.0\"?>\n<net name=\"%s\" version=\"11\">"
      "<layers><layer id=\"0\" name=\"image\" type=\"Parameter\" version=\"opset1\"><data "
      "shape=\"1,3,16,16\" element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\">%s"
      "</port></output></layer><layer id=\"1\" name=\"cvt\" type=\"Convert\" version=\"opset1\">"
      "<data destination_type=\"f32\"/><input><port id=\"0\">%s</port></input><output><port "
      "id=\"1\" precision=\"FP32\" names=\"copy\">%s</port></output></layer><layer id=\"2\" "
      "name=\"copy\" type=\"Result\" version=\"opset1\"><input><port id=\"0\">%s</port></input>"
      "</layer></layers><edges><edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" "
      "to-port=\"0\"/><edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>"
      "</edges><rt_info>%s</rt_info></net>\n", name, dd, dd, dd, dd, rt_info);
  gchar *file = g_strdup_printf ("%s.xml", name);
  gchar *path = g_build_filename (dir, file, NULL);
  g_assert_true (g_file_set_contents (path, xml, -1, NULL));
  g_free (file);
  g_free (xml);
  return path;
}

static M2iInferModel *
load_cpu (const char *xml)
{
  GError *err = NULL;
  M2iInferModelOptions mo;
  m2i_infer_model_options_init (&mo);
  mo.device = "CPU";
  M2iInferModel *m = m2i_infer_model_load (xml, &mo, &err);
  g_assert_no_error (err);
  return m;
}

static M2iInferSession *
open_copy_session (const char *xml, const M2iInferPreprocess *pp)
{
  GError *err = NULL;
  M2iInferModel *m = load_cpu (xml);
  M2iInferSession *s = m2i_infer_session_new (m, &err);
  g_assert_no_error (err);
  m2i_infer_model_unref (m);
  g_assert_true (m2i_infer_session_set_preprocess (s, pp, &err));
  g_assert_no_error (err);
  return s;
}

/* The reference path's convertU8F32 -> resize (linear_onnx) -> permute of
 * @frame (RGB) to @w x @h, planar f32. */
static void
reference_picture (const TestImage *frame, gint w, gint h, TestImage *out)
{
  M2iOpList ops;
  M2iResizeParams rp;
  m2i_op_list_init (&ops);
  m2i_op_list_add_convert (&ops, M2I_DTYPE_F32);
  m2i_resize_params_init (&rp, w, h);
  rp.mode = M2I_RESIZE_LINEAR_ONNX;
  if (w != frame->img.width || h != frame->img.height)
    m2i_op_list_add_resize (&ops, &rp);
  m2i_op_list_add_permute (&ops);
  GError *err = NULL;
  test_image_alloc (out, M2I_FORMAT_PL_FP32_RGB, w, h);
  g_assert_true (m2i_reference_run (&frame->img, &ops, &out->img, &err));
  g_assert_no_error (err);
}

static float
picture_value (const TestImage *pic, int c, gint x, gint y)
{
  return ((const float *) (pic->img.data[c] + (gsize) y * pic->img.stride[c]))[x];
}

/* Runs @pp's resize_type on a @fw x @fh frame and checks the input: the
 * picture (@pw x @ph at @px, @py: LetterBox's rule computed here) equal to
 * the reference path's resize of the frame, the rest the pad value; the
 * geometry maps the picture's corners to the frame's. */
static void
check_fit (M2iResizeType type, gint fw, gint fh)
{
  gchar *dir = g_dir_make_tmp ("m2i-fit-XXXXXX", NULL);
  gchar *xml = write_copy_model (dir, "copy", "");
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.profile = M2I_PROFILE_EXTENDED;
  pp.resize_type = type;
  pp.pad_value = 114;
  M2iInferSession *s = open_copy_session (xml, &pp);
  TestImage frame;
  test_image_alloc (&frame, M2I_FORMAT_IL_RGB888, fw, fh);
  GRand *r = g_rand_new_with_seed (fw * 100 + fh);
  test_image_randomize (&frame, r);
  g_rand_free (r);
  GError *err = NULL;
  g_assert_true (m2i_infer_session_run (s, &frame.img, NULL, NULL, &err));
  g_assert_no_error (err);
  guint n;
  const float *in = m2i_infer_session_get_outputs (s, &n)[0].data;
  /* Ultralytics' LetterBox, as its documentation states it */
  double ratio = MIN ((double) MS / fw, (double) MS / fh);
  gint pw = (gint) floor (fw * ratio + 0.5), ph = (gint) floor (fh * ratio + 0.5);
  gint px = 0, py = 0;
  if (type == M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX) {
    px = (gint) floor ((MS - pw) / 2.0 - 0.1 + 0.5);
    py = (gint) floor ((MS - ph) / 2.0 - 0.1 + 0.5);
  }
  TestImage pic;
  reference_picture (&frame, pw, ph, &pic);
  for (int c = 0; c < 3; c++)
    for (gint y = 0; y < MS; y++)
      for (gint x = 0; x < MS; x++) {
        float v = in[(c * MS + y) * MS + x];
        gboolean inside = x >= px && x < px + pw && y >= py && y < py + ph;
        float want = inside ? picture_value (&pic, c, x - px, y - py) : 114.0f;
        if (v != want)
          g_error ("%s %dx%d: channel %d (%d,%d) is %g, want %g",
              m2i_resize_type_name (type), fw, fh, c, x, y, v, want);
      }
  /* the picture's corners map to the frame's */
  const M2iInferGeometry *g = &m2i_infer_session_get_result (s)->geometry;
  g_assert_cmpfloat_with_epsilon (g->crop_x + (px - g->pad_x) / g->scale_x, 0, 1e-9);
  g_assert_cmpfloat_with_epsilon (g->crop_x + (px + pw - g->pad_x) / g->scale_x, fw, 1e-9);
  g_assert_cmpfloat_with_epsilon (g->crop_y + (py - g->pad_y) / g->scale_y, 0, 1e-9);
  g_assert_cmpfloat_with_epsilon (g->crop_y + (py + ph - g->pad_y) / g->scale_y, fh, 1e-9);
  g_assert_nonnull (strstr (m2i_infer_session_describe (s, NULL), "+ letterbox"));
  test_image_free (&pic);
  test_image_free (&frame);
  m2i_infer_session_free (s);
  g_unlink (xml);
  g_rmdir (dir);
  g_free (xml);
  g_free (dir);
}

static void
test_letterbox (void)
{
  check_fit (M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX, 40, 24);   /* 16x10 at y = 3 */
  check_fit (M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX, 21, 48);   /* 7x16 at x = 4 */
  check_fit (M2I_RESIZE_TYPE_FIT_TO_WINDOW, 40, 24);             /* 16x10 at the top */
  check_fit (M2I_RESIZE_TYPE_FIT_TO_WINDOW, 12, 20);             /* upscaled 10x16 */
}

/* crop: the frame's centre at the model's aspect, then the resize. */
static void
test_crop (void)
{
  gchar *dir = g_dir_make_tmp ("m2i-fit-XXXXXX", NULL);
  gchar *xml = write_copy_model (dir, "copy", "");
  M2iInferPreprocess pp;
  m2i_infer_preprocess_init (&pp);
  pp.profile = M2I_PROFILE_EXTENDED;
  pp.resize_type = M2I_RESIZE_TYPE_CROP;
  M2iInferSession *s = open_copy_session (xml, &pp);
  TestImage frame, centre, pic;
  test_image_alloc (&frame, M2I_FORMAT_IL_RGB888, 51, 32);
  GRand *r = g_rand_new_with_seed (5);
  test_image_randomize (&frame, r);
  g_rand_free (r);
  GError *err = NULL;
  g_assert_true (m2i_infer_session_run (s, &frame.img, NULL, NULL, &err));
  g_assert_no_error (err);
  /* 32x32 at x = 9 (of 51: the odd column left at the right) */
  test_image_alloc (&centre, M2I_FORMAT_IL_RGB888, 32, 32);
  for (gint y = 0; y < 32; y++)
    memcpy (centre.img.data[0] + y * centre.img.stride[0],
        frame.img.data[0] + y * frame.img.stride[0] + 9 * 3, 32 * 3);
  reference_picture (&centre, MS, MS, &pic);
  guint n;
  const float *in = m2i_infer_session_get_outputs (s, &n)[0].data;
  for (int c = 0; c < 3; c++)
    for (gint y = 0; y < MS; y++)
      for (gint x = 0; x < MS; x++)
        g_assert_cmpfloat (in[(c * MS + y) * MS + x], ==, picture_value (&pic, c, x, y));
  const M2iInferGeometry *g = &m2i_infer_session_get_result (s)->geometry;
  g_assert_cmpfloat (g->crop_x, ==, 9);
  g_assert_cmpfloat (g->crop_y, ==, 0);
  g_assert_cmpint (g->source_width, ==, 51);
  g_assert_cmpfloat_with_epsilon (g->crop_x + MS / g->scale_x, 41, 1e-9);
  test_image_free (&pic);
  test_image_free (&centre);
  test_image_free (&frame);
  m2i_infer_session_free (s);
  g_unlink (xml);
  g_rmdir (dir);
  g_free (xml);
  g_free (dir);
}

/* ---- the model's metadata as defaults ------------------------------------------ */

static gchar *
resolve (const char *xml, guint given, M2iInferPreprocess *pp, M2iDecoderOptions *dec)
{
  M2iInferModel *m = load_cpu (xml);
  gchar *text = m2i_infer_settings_resolve (m, given, pp, dec);
  m2i_infer_model_unref (m);
  return text;
}

static void
assert_has (const char *text, const char *line)
{
  if (!strstr (text, line))
    g_error ("settings lack \"%s\":\n%s", line, text);
}

static void
test_settings_from_metadata (void)
{
  gchar *dir = g_dir_make_tmp ("m2i-settings-XXXXXX", NULL);
  /* Model API's keys */
  gchar *mapi = write_copy_model (dir, "mapi", "<model_info>"
      "<reverse_input_channels value=\"False\"/><mean_values value=\"104 117 123\"/>"
      "<scale_values value=\"58.4\"/><resize_type value=\"fit_to_window\"/>"
      "<pad_value value=\"7\"/><confidence_threshold value=\"0.3\"/>"
      "<iou_threshold value=\"0.6\"/><agnostic_nms value=\"True\"/><topk value=\"5\"/>"
      "<labels value=\"a b c\"/></model_info>");
  M2iInferPreprocess pp;
  M2iDecoderOptions dec;
  m2i_infer_preprocess_init (&pp);
  m2i_decoder_options_init (&dec);
  gchar *t = resolve (mapi, 0, &pp, &dec);
  g_assert_cmpint (pp.channel_order, ==, M2I_ORDER_BGR);
  g_assert_cmpfloat (pp.mean[0], ==, 104);
  g_assert_cmpfloat (pp.mean[2], ==, 123);
  g_assert_cmpfloat (pp.std[1], ==, 58.4f);
  g_assert_cmpint (pp.resize_type, ==, M2I_RESIZE_TYPE_FIT_TO_WINDOW);
  g_assert_cmpfloat (pp.pad_value, ==, 7);
  g_assert_cmpfloat (dec.confidence_threshold, ==, 0.3f);
  g_assert_cmpfloat (dec.iou_threshold, ==, 0.6f);
  g_assert_true (dec.class_agnostic_nms);
  g_assert_cmpuint (dec.top_k, ==, 5);
  assert_has (t, "channel order = BGR (model_info/reverse_input_channels)");
  assert_has (t, "mean = <104, 117, 123> (model_info/mean_values)");
  assert_has (t, "resize type = fit_to_window (model_info/resize_type)");
  assert_has (t, "pad value = 7 (model_info/pad_value)");
  assert_has (t, "threshold = 0.3 (model_info/confidence_threshold)");
  assert_has (t, "labels = 3 (a, ...) (model_info/labels)");
  g_free (t);
  /* what the application set wins; input-scale scales the model's values */
  m2i_infer_preprocess_init (&pp);
  m2i_decoder_options_init (&dec);
  pp.channel_order = M2I_ORDER_RGB;
  pp.input_scale = 1.0f / 255.0f;
  dec.confidence_threshold = 0.9f;
  t = resolve (mapi, M2I_INFER_SET_CHANNEL_ORDER | M2I_INFER_SET_INPUT_SCALE
      | M2I_INFER_SET_THRESHOLD, &pp, &dec);
  g_assert_cmpint (pp.channel_order, ==, M2I_ORDER_RGB);
  g_assert_cmpfloat_with_epsilon (pp.mean[0], 104.0f / 255.0f, 1e-7);
  g_assert_cmpfloat (dec.confidence_threshold, ==, 0.9f);
  assert_has (t, "channel order = RGB (set)");
  assert_has (t, "threshold = 0.9 (set)");
  g_free (t);
  /* an Ultralytics export without model_info */
  gchar *ultra = write_copy_model (dir, "ultra", "<framework><names value=\"{0: 'person', "
      "1: 'traffic light'}\"/><stride value=\"32\"/></framework>");
  m2i_infer_preprocess_init (&pp);
  m2i_decoder_options_init (&dec);
  t = resolve (ultra, 0, &pp, &dec);
  g_assert_cmpint (pp.channel_order, ==, M2I_ORDER_RGB);
  g_assert_cmpfloat (pp.std[0], ==, 255);
  g_assert_cmpfloat (pp.mean[0], ==, 0);
  g_assert_cmpint (pp.resize_type, ==, M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX);
  g_assert_cmpfloat (pp.pad_value, ==, 114);
  assert_has (t, "pad value = 114 (framework/stride: an Ultralytics export)");
  assert_has (t, "labels = 2 (person, ...) (framework/names)");
  g_free (t);
  /* the converter's mean/scale is inside the graph: reported, not applied;
   * its channel reversal means the graph takes BGR */
  gchar *mo = write_copy_model (dir, "mo", "<conversion_parameters>"
      "<mean_values value=\"data[104.0,117.0,123.0]\"/><scale_values value=\"data[58.0]\"/>"
      "<reverse_input_channels value=\"True\"/></conversion_parameters>");
  m2i_infer_preprocess_init (&pp);
  m2i_decoder_options_init (&dec);
  t = resolve (mo, 0, &pp, &dec);
  g_assert_cmpfloat (pp.mean[0], ==, 0);
  g_assert_cmpfloat (pp.std[0], ==, 1);
  g_assert_cmpint (pp.channel_order, ==, M2I_ORDER_BGR);
  assert_has (t, "mean = <0, 0, 0> (default)");
  assert_has (t, "the model applies them, m2iinfer does not");
  assert_has (t, "the graph reverses its channels, so it takes BGR");
  g_free (t);
  for (const char *const *f = (const char *const[]) { "mapi", "ultra", "mo", NULL }; *f; f++) {
    gchar *p = g_strdup_printf ("%s/%s.xml", dir, *f);
    g_unlink (p);
    g_free (p);
  }
  g_rmdir (dir);
  g_free (mapi);
  g_free (ultra);
  g_free (mo);
  g_free (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/inputs/letterbox", test_letterbox);
  g_test_add_func ("/infer/inputs/crop", test_crop);
  g_test_add_func ("/infer/inputs/settings-from-metadata", test_settings_from_metadata);
  return g_test_run ();
}
