/* ir-private.h — internals shared inside m2i-core/ir (not installed). */
#pragma once

#include <ir/m2i-ir-op.h>

G_BEGIN_DECLS

struct _M2iIrNode {
  gint64 id;
  gchar *name;
  gchar *type;
  gchar *version;
  GHashTable *attrs;             /* gchar* → gchar*, the <data> attributes */
  /* The reader and graph may add fields below (ports, rt_info, ...). */
};

/* Built-in kernels, registered into the default registry on first use.
 * Structural ops (Parameter, Const, Result, Reshape, ...) live with the
 * runtime; compute kernels live in kernels/. */
void m2i_ir_register_structural_kernels (M2iOpRegistry *r);
void m2i_ir_register_compute_kernels (M2iOpRegistry *r);

G_END_DECLS
