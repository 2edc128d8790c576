/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-test-util.h — writes small IR models (XML text + weights) for tests;
 * includes the test support library (test-support.h) the IR and split
 * tests use. */
#pragma once

#include <ir/m2i-ir.h>
#include <m2i-data.h>
#include <test-support.h>

G_BEGIN_DECLS

typedef struct _TestIr TestIr;

/* A model under construction, IR @version (10 or 11). */
TestIr *test_ir_new (gint version);
void test_ir_free (TestIr *b);

/* Each adder returns the new layer's id; its single output is port
 * (number of inputs). */
gint test_ir_parameter (TestIr *b, const char *name, M2iElementType type,
    const M2iShape *shape);
/* A Const whose @data (numel × element size bytes) is appended to the .bin. */
gint test_ir_const (TestIr *b, M2iElementType type, const M2iShape *shape,
    gconstpointer data);
/* An op reading output 0 of each layer in @inputs, with one output of
 * @out_type/@out_shape. @attrs is the text inside <data .../> or NULL. */
gint test_ir_op (TestIr *b, const char *type, const char *opset, const char *attrs,
    gint n_inputs, const gint *inputs, M2iElementType out_type,
    const M2iShape *out_shape);
gint test_ir_result (TestIr *b, gint input);

/* The XML text and the weights. Owned by @b. */
const char *test_ir_xml (TestIr *b);
GBytes *test_ir_weights (TestIr *b);

/* Loads the model from memory (origin "test.xml"). */
M2iIrModel *test_ir_load (TestIr *b, GError **error);

/* Writes @xml (and @bin when non-NULL) as model.xml/model.bin into a new
 * temporary folder; returns the .xml path (free with test_ir_remove_files). */
gchar *test_ir_write_files (const char *xml, GBytes *bin);
void test_ir_remove_files (gchar *xml_path);

/* Shape literal helper: SHAPE(1,3,8,8). */
#define TEST_SHAPE(...) \
  ((M2iShape) { sizeof ((gint64[]) { __VA_ARGS__ }) / sizeof (gint64), { __VA_ARGS__ } })

G_END_DECLS

G_BEGIN_DECLS

/* A small IR v10 model: Parameter "in" f32 [1,2,3] (id 7), Const "w"
 * [1,1,3] f32 at offset 4 of a 16-byte .bin (id 3), Concat "cat" (id 5, axis
 * 1) whose input ports are listed 4 (the Const) then 2, Result "out" (id 1);
 * layer rt_info and v10 meta_data. The reader and error tests start from it. */
extern const char test_ir_v10_model[];

G_END_DECLS
