#include "m2i-error.h"

G_DEFINE_QUARK (m2i-error-quark, m2i_error)
