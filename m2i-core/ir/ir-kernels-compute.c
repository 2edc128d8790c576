/* Registration of the compute kernels (kernels/); filled by the kernels work. */
#include "ir-private.h"

void
m2i_ir_register_compute_kernels (M2iOpRegistry *r)
{
}
