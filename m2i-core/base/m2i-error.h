/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-error.h — the error domain shared by every part of libm2icore. */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/**
 * M2I_ERROR:
 *
 * Error domain of libm2icore. Messages are written for the user: they name
 * the object at fault (format, op, layer, file) and the reason.
 */
#define M2I_ERROR (m2i_error_quark ())

typedef enum {
  M2I_ERROR_INVALID_ARGUMENT,   /* a value is out of range or inconsistent */
  M2I_ERROR_UNSUPPORTED,        /* valid, but nothing here can do it */
  M2I_ERROR_BUFFER_TOO_SMALL,   /* a caller's buffer cannot hold the data */
  M2I_ERROR_CANCELLED,          /* the work was cancelled before it ran */
  M2I_ERROR_IO,                 /* a file could not be read or written */
  M2I_ERROR_MALFORMED,          /* a file or description is not well formed */
  M2I_ERROR_FAILED,             /* anything else */
  M2I_ERROR_LIMIT,              /* the input exceeds a limit (memory, nesting depth,
                                 * file size); the message names the limit */
} M2iError;

/* Returns the quark of M2I_ERROR. */
M2I_API GQuark m2i_error_quark (void);

G_END_DECLS
