/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-test-util.h — what the split tests share: reference data, plans
 * logged as they are made, the engine a layer landed on, and temporary
 * folders removed. Header-only (static inline), over ir-test-util. */
#pragma once

#include "../ir/ir-test-util.h"
#include <split/m2i-split.h>

#include <glib/gstdio.h>
#include <string.h>

/* A plan of @m (options @opts, NULL for the defaults), printed into the
 * test log; fails the test on error. */
static inline M2iSplitPlan *
split_logged (M2iIrModel *m, const M2iSplitOptions *opts)
{
  GError *error = NULL;
  M2iSplitPlan *plan = m2i_split_plan_new (m, opts, &error);
  g_assert_no_error (error);
  g_autofree gchar *text = m2i_split_plan_to_string (plan);
  g_test_message ("%s", text);
  return plan;
}

/* The piece and the engine that layer @name of the plan's model runs in. */
static inline gint
piece_of_layer (const M2iSplitPlan *plan, const char *name)
{
  M2iIrModel *m = m2i_split_plan_get_model (plan);
  for (gint i = 0; i < m2i_ir_model_get_n_nodes (m); i++)
    if (!strcmp (m2i_ir_node_get_name (m2i_ir_model_get_node (m, i)), name))
      return m2i_split_plan_get_node_piece (plan, i);
  g_assert_not_reached ();
}

static inline M2iSplitEngine
engine_of_layer (const M2iSplitPlan *plan, const char *name)
{
  M2iSplitPieceInfo pi;
  g_assert_true (m2i_split_plan_get_piece (plan, piece_of_layer (plan, name), &pi));
  return pi.engine;
}

