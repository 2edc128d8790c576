/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "m2i-error.h"

G_DEFINE_QUARK (m2i-error-quark, m2i_error)
