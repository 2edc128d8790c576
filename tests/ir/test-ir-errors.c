/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bad models: each defect gives a GError that names the file, the line (when
 * the XML has one) and the reason — never a crash or a leak (the ASan/LSan
 * run of this test checks the latter). */
#include "ir-test-util.h"
#include <base/m2i-error.h>

#include <string.h>

/* The cases below break test_ir_v10_model one way each. Weights: 16 bytes,
 * the Const reads 12 of them at offset 4. */
static const float weights_data[4] = { 0, 1, 2, 3 };

typedef struct {
  const char *name;
  const char *find;              /* replaced once in test_ir_v10_model ... */
  const char *replace;           /* ... by this (NULL: the case's xml is whole) */
  gboolean at_compile;           /* the error comes from m2i_ir_compile() */
  gint code;
  const char *line_of;           /* the message names the line holding this text */
  const char *expect[4];         /* substrings of the message */
} BadCase;

static const BadCase cases[] = {
  { "malformed XML", "  </layers>\n", "", FALSE, M2I_ERROR_MALFORMED, NULL,
    { "test.xml: malformed XML", "line", "layers" } },
  { "not IR", "<net name=\"demo10\" version=\"10\">", "<network version=\"10\">", FALSE,
    M2I_ERROR_MALFORMED, "<network", { "root element is <network>", "not an OpenVINO IR" } },
  { "IR version 7", "version=\"10\">", "version=\"7\">", FALSE, M2I_ERROR_UNSUPPORTED, "<net",
    { "IR version 7 is not supported", "10 and 11" } },
  { "offset outside the file", "offset=\"4\" size=\"12\"", "offset=\"8\" size=\"12\"", FALSE,
    M2I_ERROR_MALFORMED, "name=\"w\"",
    { "layer 3 'w' (Const)", "offset=8 size=12", "past the end of the weights (16 bytes" } },
  { "huge offset", "offset=\"4\" size=\"12\"", "offset=\"18446744073709551610\" size=\"12\"", FALSE,
    M2I_ERROR_MALFORMED, "name=\"w\"", { "layer 3 'w' (Const)", "must be non-negative integers" } },
  { "size mismatch", "offset=\"4\" size=\"12\"", "offset=\"4\" size=\"8\"", FALSE,
    M2I_ERROR_MALFORMED, "name=\"w\"", { "size mismatch", "[1,1,3] of f32 needs 12 bytes", "size=\"8\"" } },
  { "Const shape vs port", "shape=\"1,1,3\" offset", "shape=\"1,3,1\" offset", FALSE,
    M2I_ERROR_MALFORMED, "name=\"w\"", { "shape mismatch", "shape=\"1,3,1\"", "output port declares [1,1,3]" } },
  { "unknown op", "type=\"Concat\" version=\"opset1\"", "type=\"FancyOp\" version=\"opset7\"", TRUE,
    M2I_ERROR_UNSUPPORTED, "name=\"cat\"",
    { "1 op has no kernel (1 layer): FancyOp (opset7) \u00d71 (layer 5 'cat', line ",
      "no kernel", "custom-op plugin", "docs/ir-runtime.md" } },
  { "known op, unknown opset", "type=\"Concat\" version=\"opset1\"", "type=\"Concat\" version=\"myext\"",
    TRUE, M2I_ERROR_UNSUPPORTED, NULL,
    { "Concat (myext) \u00d71", "layer 5 'cat'", "kernels exist for Concat in: opset1", "plugin" } },
  { "unknown precision", "<port id=\"9\" precision=\"FP32\">", "<port id=\"9\" precision=\"FP17\">",
    FALSE, M2I_ERROR_MALFORMED, "FP17", { "layer 5 port 9", "unknown element type \"FP17\"" } },
  { "sub-byte type", "element_type=\"f32\" shape=\"1,1,3\"", "element_type=\"u1\" shape=\"1,1,3\"",
    FALSE, M2I_ERROR_UNSUPPORTED, "name=\"w\"", { "layer 3 'w'", "element type \"u1\" is not supported" } },
  { "i4 precision", "<port id=\"1\" precision=\"FP32\">", "<port id=\"1\" precision=\"i4\">",
    FALSE, M2I_ERROR_UNSUPPORTED, "i4", { "element type \"i4\" is not supported", "whole-byte" } },
  { "shape mismatch on an edge", "<input><port id=\"0\"><dim>1</dim><dim>3</dim>",
    "<input><port id=\"0\"><dim>1</dim><dim>4</dim>", FALSE, M2I_ERROR_MALFORMED, "to-layer=\"1\"",
    { "shape mismatch on edge", "layer 5 'cat' (Concat) output port 9 has dims [1,3,3]",
      "layer 1 'out' (Result) input port 0 declares [1,4,3]" } },
  { "type mismatch on an edge", "<port id=\"4\"><dim>1</dim>", "<port id=\"4\" precision=\"I32\"><dim>1</dim>",
    FALSE, M2I_ERROR_MALFORMED, "to-port=\"4\"",
    { "type mismatch on edge", "layer 3 'w' (Const) output port 1 is f32",
      "layer 5 'cat' (Concat) input port 4 declares i32" } },
  { "declared dims differ from the op's", "<port id=\"9\" precision=\"FP32\"><dim>1</dim><dim>3</dim></port>"
    "</output>\n    </layer>\n    <layer id=\"1\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
    "      <input><port id=\"0\"><dim>1</dim><dim>3</dim><dim>3</dim>",
    NULL, TRUE, M2I_ERROR_MALFORMED, NULL, { "" } },
  { "declared type differs from the op's", "<port id=\"9\" precision=\"FP32\">",
    "<port id=\"9\" precision=\"I32\">", TRUE, M2I_ERROR_MALFORMED, NULL,
    { "layer 5 'cat' (Concat, opset1)", "type mismatch on output port 9", "declares i32",
      "computes f32" } },
  { "dangling edge (layer)", "to-layer=\"1\" to-port=\"0\"", "to-layer=\"42\" to-port=\"0\"", FALSE,
    M2I_ERROR_MALFORMED, "to-layer=\"42\"", { "dangling edge", "no layer with id 42" } },
  { "dangling edge (port)", "from-layer=\"3\" from-port=\"1\"", "from-layer=\"3\" from-port=\"8\"",
    FALSE, M2I_ERROR_MALFORMED, "from-port=\"8\"", { "dangling edge", "layer 3 'w' (Const) has no output port 8" } },
  { "duplicate layer id", "<layer id=\"1\" name=\"out\"", "<layer id=\"5\" name=\"out\"", FALSE,
    M2I_ERROR_MALFORMED, "name=\"out\"", { "duplicate layer id 5", "also used at line 12" } },
  { "duplicate port id", "<port id=\"4\"><dim>1</dim>", "<port id=\"2\"><dim>1</dim>", FALSE,
    M2I_ERROR_MALFORMED, "<port id=\"2\"><dim>1</dim><dim>2", { "layer 5: duplicate input port id 2" } },
  { "missing Result", "name=\"out\" type=\"Result\"", "name=\"out\" type=\"Sink\"",
    FALSE, M2I_ERROR_MALFORMED, NULL, { "" } },
  { "unconnected input", "    <edge from-layer=\"7\" from-port=\"0\" to-layer=\"5\" to-port=\"2\"/>\n", "",
    FALSE, M2I_ERROR_MALFORMED, "<port id=\"2\">",
    { "layer 5 'cat' (Concat): input port 2 is not connected to any edge" } },
  { "input connected twice", "to-layer=\"5\" to-port=\"4\"/>\n",
    "to-layer=\"5\" to-port=\"4\"/>\n    <edge from-layer=\"3\" from-port=\"1\" to-layer=\"5\" to-port=\"4\"/>\n",
    FALSE, M2I_ERROR_MALFORMED, NULL, { "layer 5 'cat' (Concat): input port 4 is connected by more than one edge" } },
  { "malformed attribute", "<data axis=\"1\"/>", "<data axis=\"one\"/>", TRUE, M2I_ERROR_MALFORMED, NULL,
    { "layer 5 'cat' (Concat, opset1)", "attribute axis=\"one\" is not an integer" } },
  { "axis out of range", "<data axis=\"1\"/>", "<data axis=\"3\"/>", TRUE, M2I_ERROR_INVALID_ARGUMENT,
    NULL, { "layer 5 'cat' (Concat, opset1)", "axis 3 is out of range for rank 3" } },
  { "negative dimension", "<dim>1</dim><dim>2</dim><dim>3</dim></port></output>",
    "<dim>1</dim><dim>-2</dim><dim>3</dim></port></output>", FALSE, M2I_ERROR_MALFORMED, "<dim>-2",
    { "layer 7 port 0", "<dim>-2</dim> is negative" } },
  { "bad dim", "<dim>1</dim><dim>2</dim><dim>3</dim></port></output>",
    "<dim>1</dim><dim>two</dim><dim>3</dim></port></output>", FALSE, M2I_ERROR_MALFORMED, "<dim>two",
    { "<dim>two</dim> is not an integer" } },
  { "no version", "type=\"Concat\" version=\"opset1\"", "type=\"Concat\"", FALSE, M2I_ERROR_MALFORMED,
    "name=\"cat\"", { "layer 5 (Concat) has no version attribute" } },
  { "sub-graph", "<data axis=\"1\"/>", "<data axis=\"1\"/><body><layers/></body>", TRUE,
    M2I_ERROR_UNSUPPORTED, NULL, { "layer 5 'cat'", "sub-graphs", "not supported" } },
  { "empty document", "", NULL, FALSE, M2I_ERROR_MALFORMED, NULL, { "test.xml: malformed XML" } },
  { "truncated UTF-8", "", NULL, FALSE, M2I_ERROR_MALFORMED, NULL, { "test.xml:1: ", "not an OpenVINO IR file" } },
  { "cycle", "", NULL, FALSE, M2I_ERROR_MALFORMED, NULL, { "" } },
  { "bad element type of Parameter", "<data shape=\"1, 2, 3\" element_type=\"f32\"/>",
    "<data shape=\"1, 2, 3\" element_type=\"float\"/>", FALSE, M2I_ERROR_MALFORMED, "name=\"in\"",
    { "layer 7 'in' (Parameter)", "unknown element type \"float\"" } },
};

/* Line (1-based) of the first occurrence of @needle in @text. */
static gint
line_of (const char *text, const char *needle)
{
  const char *p = strstr (text, needle);
  g_assert_nonnull (p);
  gint line = 1;
  for (const char *q = text; q < p; q++)
    line += *q == '\n';
  return line;
}

static gchar *
case_xml (const BadCase *c)
{
  if (!strcmp (c->name, "empty document"))
    return g_strdup ("");
  if (!strcmp (c->name, "truncated UTF-8"))      /* found by the fuzzer */
    return g_strdup ("<\304\254ayers>\304");
  if (!strcmp (c->name, "cycle"))
    return g_strdup (
      "<?xml version=\"1.0\"?>\n<net name=\"loop\" version=\"11\">\n<layers>\n"
      "<layer id=\"1\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"3\" element_type=\"f32\"/>"
      "<output><port id=\"0\" precision=\"FP32\"><dim>3</dim></port></output></layer>\n"
      "<layer id=\"2\" name=\"a\" type=\"Convert\" version=\"opset1\"><data destination_type=\"f32\"/>"
      "<input><port id=\"0\"><dim>3</dim></port></input><output><port id=\"1\" precision=\"FP32\"><dim>3</dim></port></output></layer>\n"
      "<layer id=\"3\" name=\"b\" type=\"Convert\" version=\"opset1\"><data destination_type=\"f32\"/>"
      "<input><port id=\"0\"><dim>3</dim></port></input><output><port id=\"1\" precision=\"FP32\"><dim>3</dim></port></output></layer>\n"
      "<layer id=\"4\" name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\"><dim>3</dim></port></input></layer>\n"
      "</layers>\n<edges>\n"
      "<edge from-layer=\"3\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>\n"
      "<edge from-layer=\"2\" from-port=\"1\" to-layer=\"3\" to-port=\"0\"/>\n"
      "<edge from-layer=\"2\" from-port=\"1\" to-layer=\"4\" to-port=\"0\"/>\n"
      "</edges>\n</net>\n");
  GString *s = g_string_new (test_ir_v10_model);
  if (!c->replace) {
    /* declared dims of Concat's output and the Result's input both [1,4,3] */
    g_assert_cmpint (g_string_replace (s, "<port id=\"9\" precision=\"FP32\"><dim>1</dim><dim>3</dim>",
        "<port id=\"9\" precision=\"FP32\"><dim>1</dim><dim>4</dim>", 1), ==, 1);
    g_assert_cmpint (g_string_replace (s, "<input><port id=\"0\"><dim>1</dim><dim>3</dim>",
        "<input><port id=\"0\"><dim>1</dim><dim>4</dim>", 1), ==, 1);
  } else
    g_assert_cmpint (g_string_replace (s, c->find, c->replace, 1), ==, 1);
  return g_string_free (s, FALSE);
}

static void
check_message (const BadCase *c, const char *xml, const GError *error)
{
  g_assert_nonnull (error);
  g_test_message ("%s: %s", c->name, error->message);
  g_assert_true (error->domain == M2I_ERROR);
  if (error->code != c->code)
    g_error ("%s: code %d, expected %d (%s)", c->name, error->code, c->code, error->message);
  for (gint i = 0; i < 4 && c->expect[i]; i++)
    if (!strstr (error->message, c->expect[i]))
      g_error ("%s: message \"%s\" lacks \"%s\"", c->name, error->message, c->expect[i]);
  if (c->line_of) {
    g_autofree gchar *at = g_strdup_printf ("test.xml:%d: ", line_of (xml, c->line_of));
    if (!g_str_has_prefix (error->message, at))
      g_error ("%s: message \"%s\" does not start with \"%s\"", c->name, error->message, at);
  }
}

static void
test_bad_models (void)
{
  g_autoptr (GBytes) weights = g_bytes_new (weights_data, sizeof weights_data);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const BadCase *c = &cases[i];
    g_autofree gchar *xml = case_xml (c);
    GError *error = NULL;
    M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), weights, "test.xml", &error);
    if (c->at_compile) {
      if (!m)
        g_error ("%s: load failed: %s", c->name, error->message);
      M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
      g_assert_null (cm);
      m2i_ir_model_unref (m);
    } else
      g_assert_null (m);
    check_message (c, xml, error);
    g_error_free (error);
  }
}

/* The messages of the whole-xml cases above, checked one by one. */
static void
test_specific_messages (void)
{
  g_autoptr (GBytes) weights = g_bytes_new (weights_data, sizeof weights_data);
  GError *error = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const BadCase *c = &cases[i];
    g_autofree gchar *xml = case_xml (c);
    M2iIrModel *m = m2i_ir_model_load_from_memory (xml, strlen (xml), weights, "test.xml", &error);
    if (m) {
      M2iIrCompiledModel *cm = m2i_ir_compile (m, NULL, &error);
      g_assert_null (cm);
      m2i_ir_model_unref (m);
    }
    if (!strcmp (c->name, "cycle")) {
      g_assert_true (g_str_has_prefix (error->message, "test.xml:"));
      g_assert_nonnull (strstr (error->message, "the graph has a cycle: "));
      g_assert_true (strstr (error->message, "layer 2 'a' -> layer 3 'b' -> layer 2 'a'") ||
          strstr (error->message, "layer 3 'b' -> layer 2 'a' -> layer 3 'b'"));
    } else if (!strcmp (c->name, "missing Result")) {
      g_assert_cmpstr (error->message, ==, "test.xml: the model has no Result layer, so it computes nothing");
    } else if (!c->replace && strcmp (c->name, "empty document") && strcmp (c->name, "truncated UTF-8")) {
      g_assert_cmpstr (error->message, ==, "test.xml:12: layer 5 'cat' (Concat, opset1): shape mismatch on output "
          "port 9: the XML declares [1,4,3] but the op computes [1,3,3] from its inputs");
    }
    g_clear_error (&error);
  }
}

/* Files: a missing .bin, an unreadable .xml. */
static void
test_files (void)
{
  GError *error = NULL;
  gchar *path = test_ir_write_files (test_ir_v10_model, NULL);
  M2iIrModel *m = m2i_ir_model_load (path, NULL, &error);
  g_assert_null (m);
  g_assert_error (error, M2I_ERROR, M2I_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "cannot open the weights file (needed by layer 3 'w' (Const))"));
  g_assert_nonnull (strstr (error->message, "model.bin"));
  g_assert_true (g_str_has_prefix (error->message, path));
  g_clear_error (&error);
  m = m2i_ir_model_load (path, "/nonexistent/weights.bin", &error);
  g_assert_null (m);
  g_assert_nonnull (strstr (error->message, "/nonexistent/weights.bin"));
  g_clear_error (&error);
  test_ir_remove_files (path);

  m = m2i_ir_model_load ("/nonexistent/model.xml", NULL, &error);
  g_assert_null (m);
  g_assert_error (error, M2I_ERROR, M2I_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent/model.xml"));
  g_clear_error (&error);

  /* a model without Const needs no .bin */
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (2);
  test_ir_result (b, test_ir_parameter (b, "x", M2I_ET_F32, &s));
  path = test_ir_write_files (test_ir_xml (b), NULL);
  m = m2i_ir_model_load (path, NULL, &error);
  g_assert_no_error (error);
  m2i_ir_model_unref (m);
  test_ir_remove_files (path);
  test_ir_free (b);
}

/* A Parameter of 2^61 i64 elements (2^64 bytes) is refused at compile. */
static void
test_huge_tensor (void)
{
  TestIr *b = test_ir_new (11);
  M2iShape s = TEST_SHAPE (G_GINT64_CONSTANT (1) << 61);
  test_ir_result (b, test_ir_parameter (b, "x", M2I_ET_I64, &s));
  GError *error = NULL;
  M2iIrModel *m = test_ir_load (b, &error);
  g_assert_no_error (error);
  g_assert_null (m2i_ir_compile (m, NULL, &error));
  g_assert_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "output 0 (i64 [2305843009213693952]) is larger than the 1 TiB"));
  g_clear_error (&error);
  m2i_ir_model_unref (m);
  test_ir_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/errors/bad-models", test_bad_models);
  g_test_add_func ("/ir/errors/messages", test_specific_messages);
  g_test_add_func ("/ir/errors/files", test_files);
  g_test_add_func ("/ir/errors/huge-tensor", test_huge_tensor);
  return g_test_run ();
}
