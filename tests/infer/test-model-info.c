/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-model-info.c — model metadata (model-info.c) and the labels parser
 * (labels.c).
 *
 * The real models' rt_info (../shared, skipped when absent): yolov8n-int8's
 * model_info written by Ultralytics' OpenVINO export, yolov5n's
 * framework/names (Ultralytics' ONNX metadata), squeezenet1.1's and
 * human-pose-estimation-0001's IR v10 meta_data (Model Optimizer's built-in
 * mean/scale); the project's tiny-seg. Malformed values: a warning each,
 * the default kept. Labels in every spelling, and the malformed ones. */
#include "decode-test-util.h"

#include <glib/gstdio.h>
#include <string.h>

static M2iModelInfo *
shared_info (const char *relative)
{
  M2iIrModel *m = test_load_shared_model (relative);
  if (!m)
    return NULL;
  M2iModelInfo *info = m2i_model_info_new (m);
  m2i_ir_model_unref (m);
  g_autofree gchar *text = m2i_model_info_describe (info);
  g_test_message ("%s:\n%s", relative, text);
  return info;
}

static void
test_yolov8n (void)
{
  M2iModelInfo *i = shared_info ("yolov8n-int8/yolov8n.xml");
  if (!i) {
    g_test_skip ("../shared/models/external is not here");
    return;
  }
  g_assert_cmpstr (i->model_type, ==, "YOLO");
  g_assert_cmpint (i->model_type_from.source, ==, M2I_MODEL_INFO_MODEL_INFO);
  g_assert_cmpstr (i->model_type_from.key, ==, "model_info/model_type");
  g_assert_cmpuint (i->n_labels, ==, 80);
  g_assert_cmpstr (i->labels[0], ==, "person");
  g_assert_cmpstr (i->labels[9], ==, "traffic_light");
  g_assert_cmpstr (i->labels[79], ==, "toothbrush");
  g_assert_null (i->labels[80]);
  g_assert_cmpstr (i->labels_from.key, ==, "model_info/labels");
  g_assert_cmpfloat_with_epsilon (i->iou_threshold, 0.7, 1e-6);
  g_assert_cmpstr (i->iou_threshold_from.key, ==, "model_info/iou_threshold");
  g_assert_cmpint (i->pad_value, ==, 114);
  g_assert_cmpint (i->resize_type, ==, M2I_RESIZE_TYPE_FIT_TO_WINDOW_LETTERBOX);
  g_assert_true (i->reverse_input_channels);
  g_assert_cmpuint (i->n_scale_values, ==, 1);
  g_assert_cmpfloat (i->scale_values[0], ==, 255);
  g_assert_cmpuint (i->n_mean_values, ==, 0);
  g_assert_null (i->mean_values_from.key);
  /* not in the file: defaults, unset */
  g_assert_cmpfloat (i->confidence_threshold, ==, 0.5f);
  g_assert_cmpint (i->confidence_threshold_from.source, ==, M2I_MODEL_INFO_UNSET);
  g_assert_null (i->converted_from.key);
  g_assert_cmpuint (g_strv_length (i->warnings), ==, 0);
  g_autofree gchar *text = m2i_model_info_describe (i);
  g_assert_nonnull (strstr (text, "labels = 80 (person, ...) (from model_info/labels)"));
  g_assert_nonnull (strstr (text, "resize = fit_to_window_letterbox (from model_info/resize_type)"));
  m2i_model_info_free (i);
}

static void
test_yolov5n (void)
{
  M2iModelInfo *i = shared_info ("yolov5n/yolov5n.xml");
  if (!i) {
    g_test_skip ("../shared/models/external is not here");
    return;
  }
  g_assert_null (i->model_type);
  g_assert_cmpuint (i->n_labels, ==, 80);
  g_assert_cmpstr (i->labels[0], ==, "person");
  g_assert_cmpstr (i->labels[9], ==, "traffic light");
  g_assert_cmpstr (i->labels[77], ==, "teddy bear");
  g_assert_cmpint (i->labels_from.source, ==, M2I_MODEL_INFO_FRAMEWORK);
  g_assert_cmpstr (i->labels_from.key, ==, "framework/names");
  g_assert_cmpuint (i->stride, ==, 32);
  g_assert_cmpint (i->resize_type_from.source, ==, M2I_MODEL_INFO_UNSET);
  g_assert_null (i->converted_from.key);
  g_assert_cmpuint (g_strv_length (i->warnings), ==, 0);
  m2i_model_info_free (i);
}

/* IR v10 meta_data: what Model Optimizer built into the graph. */
static void
test_model_optimizer_v10 (void)
{
  M2iModelInfo *i = shared_info ("squeezenet1.1/squeezenet1.1.xml");
  if (!i) {
    g_test_skip ("../shared/models/external is not here");
    return;
  }
  g_assert_cmpuint (i->n_converted_mean_values, ==, 3);
  g_assert_cmpfloat (i->converted_mean_values[0], ==, 104);
  g_assert_cmpfloat (i->converted_mean_values[2], ==, 123);
  g_assert_cmpuint (i->n_converted_scale_values, ==, 0);       /* "()" */
  g_assert_false (i->converted_reverse_input_channels);
  g_assert_cmpstr (i->converted_from.key, ==, "meta_data/cli_parameters/mean_values");
  g_assert_cmpint (i->converted_from.source, ==, M2I_MODEL_INFO_CONVERSION);
  /* nothing the application must do */
  g_assert_cmpuint (i->n_mean_values, ==, 0);
  g_assert_null (i->labels);
  g_assert_cmpuint (g_strv_length (i->warnings), ==, 0);
  m2i_model_info_free (i);

  i = shared_info ("human-pose-estimation-0001/human-pose-estimation-0001.xml");
  g_assert_nonnull (i);
  g_assert_cmpuint (i->n_converted_mean_values, ==, 3);
  g_assert_cmpfloat (i->converted_mean_values[1], ==, 128);
  g_assert_cmpuint (i->n_converted_scale_values, ==, 1);
  g_assert_cmpfloat (i->converted_scale_values[0], ==, 255);
  g_assert_cmpuint (g_strv_length (i->warnings), ==, 0);
  m2i_model_info_free (i);
}

static void
test_tiny_seg (void)
{
  M2iIrModel *m = test_load_project_model ("tiny-seg/tiny-seg.xml");
  M2iModelInfo *i = m2i_model_info_new (m);
  g_assert_cmpstr (i->model_type, ==, "Segmentation");
  g_assert_cmpuint (i->n_labels, ==, 4);
  g_assert_cmpstr (i->labels[3], ==, "blue");
  g_assert_true (i->reverse_input_channels);
  g_assert_cmpint (i->resize_type, ==, M2I_RESIZE_TYPE_STANDARD);
  g_assert_cmpstr (i->resize_type_from.key, ==, "model_info/resize_type");
  m2i_model_info_free (i);
  m2i_ir_model_unref (m);
  /* no model: defaults */
  i = m2i_model_info_new (NULL);
  g_assert_cmpfloat (i->iou_threshold, ==, 0.5f);
  g_assert_cmpuint (i->topk, ==, 1);
  g_assert_nonnull (i->warnings);
  g_autofree gchar *text = m2i_model_info_describe (i);
  g_assert_cmpstr (text, ==, "");
  m2i_model_info_free (i);
}

static M2iModelInfo *
info_from_rt (const char *rt_info)
{
  TestOutput out = { "prob", "SoftMax", NULL, M2I_ET_F32, TEST_SHAPE (1, 10) };
  M2iIrModel *m = test_model_new (&out, 1, rt_info);
  M2iModelInfo *i = m2i_model_info_new (m);
  m2i_ir_model_unref (m);
  return i;
}

static void
test_every_key (void)
{
  M2iModelInfo *i = info_from_rt (
      "<model_info>"
      "<model_type value=\" YOLOv8 \"/><labels value=\"['cat', 'dog']\"/>"
      "<mean_values value=\"123.675, 116.28, 103.53\"/><scale_values value=\"[58.395 57.12 57.375]\"/>"
      "<reverse_input_channels value=\"True\"/><resize_type value=\"Crop\"/>"
      "<pad_value value=\"0\"/><layout value=\"images:NHWC\"/>"
      "<confidence_threshold value=\"0.25\"/><iou_threshold value=\"0.45\"/>"
      "<agnostic_nms value=\"YES\"/><multilabel value=\"false\"/><output_raw_scores value=\"1\"/>"
      "<topk value=\"5\"/><anchors value=\"10,14, 23,27\"/><masks value=\"1, 0\"/>"
      "</model_info>"
      "<framework><task value=\"pose\"/><imgsz value=\"[480, 640]\"/><stride value=\"[8, 16, 32]\"/>"
      "<kpt_shape value=\"[17, 3]\"/><names value=\"{0: 'x'}\"/></framework>"
      "<conversion_parameters><scale_values value=\"[255]\"/>"
      "<reverse_input_channels value=\"True\"/></conversion_parameters>");
  g_assert_cmpstr (i->model_type, ==, "YOLOv8");
  g_assert_cmpuint (i->n_labels, ==, 2);          /* model_info before framework */
  g_assert_cmpstr (i->labels[1], ==, "dog");
  g_assert_cmpuint (i->n_mean_values, ==, 3);
  g_assert_cmpfloat (i->mean_values[1], ==, 116.28f);
  g_assert_cmpfloat (i->scale_values[2], ==, 57.375f);
  g_assert_true (i->reverse_input_channels);
  g_assert_cmpint (i->resize_type, ==, M2I_RESIZE_TYPE_CROP);
  g_assert_cmpint (i->pad_value, ==, 0);
  g_assert_cmpstr (i->pad_value_from.key, ==, "model_info/pad_value");
  g_assert_cmpstr (i->layout, ==, "images:NHWC");
  g_assert_cmpfloat (i->confidence_threshold, ==, 0.25f);
  g_assert_cmpfloat (i->iou_threshold, ==, 0.45f);
  g_assert_true (i->agnostic_nms);
  g_assert_false (i->multilabel);
  g_assert_cmpstr (i->multilabel_from.key, ==, "model_info/multilabel");
  g_assert_true (i->output_raw_scores);
  g_assert_cmpuint (i->topk, ==, 5);
  g_assert_cmpuint (i->n_anchors, ==, 4);
  g_assert_cmpuint (i->n_masks, ==, 2);
  g_assert_cmpint (i->masks[0], ==, 1);
  g_assert_cmpstr (i->task, ==, "pose");
  g_assert_cmpuint (i->imgsz_height, ==, 480);
  g_assert_cmpuint (i->imgsz_width, ==, 640);
  g_assert_cmpuint (i->stride, ==, 32);
  g_assert_cmpuint (i->kpt_count, ==, 17);
  g_assert_cmpuint (i->kpt_dims, ==, 3);
  g_assert_cmpuint (i->n_converted_scale_values, ==, 1);
  g_assert_true (i->converted_reverse_input_channels);
  g_assert_cmpstr (i->converted_from.key, ==, "conversion_parameters/scale_values");
  g_assert_cmpuint (g_strv_length (i->warnings), ==, 0);
  g_autofree gchar *text = m2i_model_info_describe (i);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "inside the model already (converter): scale 255 channels reversed"));
  m2i_model_info_free (i);
}

static void
test_malformed (void)
{
  g_autofree gchar *long_type = g_strnfill (300, 'y');
  g_autofree gchar *rt = g_strdup_printf (
      "<model_info>"
      "<model_type value=\"%s\"/><labels value=\"['unclosed\"/>"
      "<mean_values value=\"0 0 0 0 0\"/><scale_values value=\"1 0 1\"/>"
      "<reverse_input_channels value=\"maybe\"/><resize_type value=\"stretch\"/>"
      "<pad_value value=\"300\"/><confidence_threshold value=\"nan\"/>"
      "<iou_threshold value=\"0.5 0.6\"/><agnostic_nms value=\"\"/><topk value=\"2.5\"/>"
      "<anchors value=\"10,14,23\"/><masks value=\"1.5\"/><multilabel value=\"2\"/>"
      "</model_info>"
      "<framework><names value=\"{0: 'a', 0: 'b'}\"/><imgsz value=\"[0, 640]\"/>"
      "<stride value=\"abc\"/><kpt_shape value=\"[17, 4]\"/><task value=\"a&#10;b\"/></framework>"
      "<conversion_parameters><mean_values value=\"data[1,2\"/><layout value=\"\"/>"
      "</conversion_parameters>", long_type);
  M2iModelInfo *i = info_from_rt (rt);
  const char *keys[] = { "model_info/model_type", "model_info/labels", "model_info/mean_values",
    "model_info/scale_values", "model_info/reverse_input_channels", "model_info/resize_type",
    "model_info/pad_value", "model_info/confidence_threshold", "model_info/iou_threshold",
    "model_info/agnostic_nms", "model_info/topk", "model_info/anchors", "model_info/masks",
    "model_info/multilabel", "framework/names", "framework/imgsz", "framework/stride",
    "framework/kpt_shape", "framework/task", "conversion_parameters/mean_values" };
  g_autofree gchar *all = g_strjoinv ("\n", i->warnings);
  g_test_message ("%s", all);
  g_assert_cmpuint (g_strv_length (i->warnings), ==, G_N_ELEMENTS (keys));
  for (guint k = 0; k < G_N_ELEMENTS (keys); k++) {
    g_autofree gchar *prefix = g_strdup_printf ("%s = ", keys[k]);
    gboolean found = FALSE;
    for (gchar **w = i->warnings; *w; w++)
      found |= g_str_has_prefix (*w, prefix);
    g_assert_true (found);
  }
  /* every setting kept its default */
  g_assert_null (i->model_type);
  g_assert_null (i->labels);
  g_assert_cmpuint (i->n_mean_values, ==, 0);
  g_assert_cmpuint (i->n_scale_values, ==, 0);
  g_assert_false (i->reverse_input_channels);
  g_assert_cmpint (i->resize_type, ==, M2I_RESIZE_TYPE_STANDARD);
  g_assert_cmpint (i->pad_value, ==, 0);
  g_assert_cmpfloat (i->confidence_threshold, ==, 0.5f);
  g_assert_cmpfloat (i->iou_threshold, ==, 0.5f);
  g_assert_cmpuint (i->topk, ==, 1);
  g_assert_cmpuint (i->n_anchors, ==, 0);
  g_assert_cmpuint (i->n_masks, ==, 0);
  g_assert_cmpuint (i->imgsz_width, ==, 0);
  g_assert_cmpuint (i->kpt_count, ==, 0);
  g_assert_null (i->task);
  g_assert_null (i->layout);
  g_assert_null (i->converted_from.key);
  /* the long value is shown cut */
  g_assert_nonnull (strstr (all, "yyy...\""));
  m2i_model_info_free (i);
}

/* Random rt_info values: never a crash, a warning or a value. */
static void
test_random_values (void)
{
  static const char *const keys[] = { "model_info/labels", "model_info/mean_values",
    "model_info/scale_values", "model_info/pad_value", "model_info/anchors", "framework/names",
    "framework/imgsz", "model_info/resize_type", "model_info/topk" };
  static const char alphabet[] = "0123456789 ,.-+eE[](){}:'\"\\xu#\nabcz_";
  GRand *rnd = g_rand_new_with_seed (3);
  for (guint n = 0; n < 400; n++) {
    GString *v = g_string_new (NULL);
    guint len = g_rand_int_range (rnd, 0, 40);
    for (guint k = 0; k < len; k++)
      g_string_append_c (v, alphabet[g_rand_int_range (rnd, 0, sizeof alphabet - 1)]);
    const char *key = keys[n % G_N_ELEMENTS (keys)];
    g_autofree gchar *esc = g_markup_escape_text (v->str, -1);
    const char *slash = strchr (key, '/');
    g_autofree gchar *group = g_strndup (key, slash - key);
    g_autofree gchar *rt = g_strdup_printf ("<%s><%s value=\"%s\"/></%s>", group, slash + 1, esc,
        group);
    M2iModelInfo *i = info_from_rt (rt);
    g_autofree gchar *text = m2i_model_info_describe (i);
    /* the value was read (and is described) or refused with a warning */
    g_assert_cmpuint (strlen (text), >, 0);
    m2i_model_info_free (i);
    g_string_free (v, TRUE);
  }
  g_rand_free (rnd);
}

/* ---- labels ------------------------------------------------------------------------ */

static void
check_labels (const char *text, M2iLabelsFormat format, const char *const *want)
{
  GError *error = NULL;
  g_auto (GStrv) got = m2i_labels_parse (text, -1, format, &error);
  g_assert_no_error (error);
  g_assert_nonnull (got);
  g_assert_cmpuint (g_strv_length (got), ==, g_strv_length ((gchar **) want));
  for (guint i = 0; want[i]; i++)
    g_assert_cmpstr (got[i], ==, want[i]);
}

#define L(...) ((const char *const[]) { __VA_ARGS__, NULL })

static void
test_labels_formats (void)
{
  check_labels ("person\nbicycle\n\ncar\n\n\n", M2I_LABELS_AUTO, L ("person", "bicycle", "", "car"));
  check_labels ("a b\r\nc  \r\n", M2I_LABELS_AUTO, L ("a b", "c"));
  check_labels ("\xEF\xBB\xBFone\ntwo", M2I_LABELS_AUTO, L ("one", "two"));
  check_labels ("[\"person\", \"bi\\\"cycle\", \"caf\\u00e9\", \"\\ud83d\\ude00\"]", M2I_LABELS_AUTO,
      L ("person", "bi\"cycle", "café", "😀"));
  check_labels ("  ['a', \"b\", 'it\\'s',\n 'tab\\there']  ", M2I_LABELS_AUTO,
      L ("a", "b", "it's", "tab\there"));
  check_labels ("[a, b c , d,]", M2I_LABELS_AUTO, L ("a", "b c", "d"));
  check_labels ("{0: 'person', 2: 'car', 1: \"bicycle\"}", M2I_LABELS_AUTO,
      L ("person", "bicycle", "car"));
  check_labels ("{\"0\": \"x\", \"3\": \"y\",}", M2I_LABELS_AUTO, L ("x", "1", "2", "y"));
  check_labels ("# classes\n- person\n- 'traffic light'\n-   dog  \n", M2I_LABELS_AUTO,
      L ("person", "traffic light", "dog"));
  check_labels ("names:\n", M2I_LABELS_AUTO, L ("names:"));
  check_labels ("0: person\n1: traffic light\n  2 : 'a: b'\n", M2I_LABELS_AUTO,
      L ("person", "traffic light", "a: b"));
  check_labels ("person bicycle\n  traffic_light ", M2I_LABELS_WORDS,
      L ("person", "bicycle", "traffic_light"));
  check_labels ("[x, y]", M2I_LABELS_WORDS, L ("x", "y"));
  check_labels ("[x, y]", M2I_LABELS_LINES, L ("[x, y]"));
  check_labels ("- a\n- b", M2I_LABELS_LINES, L ("- a", "- b"));
  /* invalid UTF-8 is replaced, not passed on */
  GError *error = NULL;
  g_auto (GStrv) bad = m2i_labels_parse ("ok\n\xff\xfe", -1, M2I_LABELS_AUTO, &error);
  g_assert_no_error (error);
  g_assert_true (g_utf8_validate (bad[1], -1, NULL));
  /* counted text stops at its length */
  g_auto (GStrv) counted = m2i_labels_parse ("a\nb\nc", 3, M2I_LABELS_AUTO, &error);
  g_assert_cmpuint (g_strv_length (counted), ==, 2);
}

static void
test_labels_malformed (void)
{
  g_autofree gchar *too_long = g_strnfill (M2I_LABEL_MAX_BYTES + 1, 'x');
  g_autofree gchar *too_long_q = g_strdup_printf ("['%s']", too_long);
  const char *bad[] = {
    "", "   \n\n", "[]", "{}", "[a, b", "['a', 'b'", "[\"a\nb\"]", "[[a]]", "[a, , b]",
    "['a' 'b']", "{0 'a'}", "{x: 'a'}", "{0: 'a', 0: 'b'}", "{999999: 'a'}", "{-1: 'a'}",
    "{0: }", "['a'] trailing", "['\\u12']", "['\\x4']", "- 'unclosed\n- b", "0: 'a' b\n",
    too_long, too_long_q,
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    GError *error = NULL;
    gchar **got = m2i_labels_parse (bad[i], -1, M2I_LABELS_AUTO, &error);
    if (got)
      g_error ("\"%.40s\" parsed as %u labels", bad[i], g_strv_length (got));
    g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
    g_test_message ("%.40s -> %s", bad[i], error->message);
    g_clear_error (&error);
  }
  /* too many labels */
  GString *many = g_string_new (NULL);
  for (guint i = 0; i <= M2I_LABELS_MAX; i++)
    g_string_append (many, "a\n");
  GError *error = NULL;
  g_assert_null (m2i_labels_parse (many->str, many->len, M2I_LABELS_AUTO, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
  g_clear_error (&error);
  g_string_free (many, TRUE);
  /* random bytes: a result or an error, never a crash */
  GRand *rnd = g_rand_new_with_seed (9);
  for (guint n = 0; n < 2000; n++) {
    static const char alphabet[] = "[]{}:,'\"\\ux0123 ab-#\n\t\xc3\xa9\xff";
    char buf[48];
    guint len = g_rand_int_range (rnd, 0, sizeof buf);
    for (guint k = 0; k < len; k++)
      buf[k] = alphabet[g_rand_int_range (rnd, 0, sizeof alphabet - 1)];
    gchar **got = m2i_labels_parse (buf, len, (M2iLabelsFormat) (n % 3), &error);
    g_assert_true ((got == NULL) == (error != NULL));
    for (gchar **l = got; l && *l; l++)
      g_assert_true (g_utf8_validate (*l, -1, NULL));
    g_strfreev (got);
    g_clear_error (&error);
  }
  g_rand_free (rnd);
}

static void
test_labels_load (void)
{
  g_autofree gchar *dir = g_dir_make_tmp ("m2i-labels-XXXXXX", NULL);
  g_autofree gchar *path = g_build_filename (dir, "labels.json", NULL);
  g_assert_true (g_file_set_contents (path, "[\"cat\", \"dog\"]\n", -1, NULL));
  GError *error = NULL;
  g_auto (GStrv) l = m2i_labels_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (l), ==, 2);
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  g_assert_null (m2i_labels_load (path, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
  g_assert_nonnull (strstr (error->message, path));
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (path, "[a, b", -1, NULL));
  g_assert_null (m2i_labels_load (path, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_MALFORMED);
  g_assert_nonnull (strstr (error->message, "line 1"));
  g_clear_error (&error);
  g_unlink (path);
  g_rmdir (dir);
  g_assert_null (m2i_labels_load (path, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_IO);
  g_clear_error (&error);
}

static void
test_resize_names (void)
{
  for (M2iResizeType t = M2I_RESIZE_TYPE_STANDARD; t <= M2I_RESIZE_TYPE_CROP; t++) {
    M2iResizeType back;
    g_assert_true (m2i_resize_type_from_name (m2i_resize_type_name (t), &back));
    g_assert_cmpint (back, ==, t);
  }
  M2iResizeType keep = M2I_RESIZE_TYPE_CROP;
  g_assert_false (m2i_resize_type_from_name ("letterbox", &keep));
  g_assert_false (m2i_resize_type_from_name (NULL, &keep));
  g_assert_cmpint (keep, ==, M2I_RESIZE_TYPE_CROP);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model-info/yolov8n-int8", test_yolov8n);
  g_test_add_func ("/model-info/yolov5n", test_yolov5n);
  g_test_add_func ("/model-info/model-optimizer-v10", test_model_optimizer_v10);
  g_test_add_func ("/model-info/tiny-seg", test_tiny_seg);
  g_test_add_func ("/model-info/every-key", test_every_key);
  g_test_add_func ("/model-info/malformed", test_malformed);
  g_test_add_func ("/model-info/random-values", test_random_values);
  g_test_add_func ("/labels/formats", test_labels_formats);
  g_test_add_func ("/labels/malformed", test_labels_malformed);
  g_test_add_func ("/labels/load", test_labels_load);
  g_test_add_func ("/model-info/resize-names", test_resize_names);
  return g_test_run ();
}
