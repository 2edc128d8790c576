/* Registration of the compute kernels (kernels/) into the default registry. */
#include "ir-private.h"
#include "kernels/kernels-private.h"

static const M2iOpKernel *const compute_kernels[] = {
  &ir_kernel_convolution,
  &ir_kernel_group_convolution,
  &ir_kernel_matmul,
  &ir_kernel_add,
  &ir_kernel_subtract,
  &ir_kernel_multiply,
  &ir_kernel_divide,
  &ir_kernel_relu,
  &ir_kernel_prelu,
  &ir_kernel_clamp,
  &ir_kernel_sigmoid,
  &ir_kernel_exp,
  &ir_kernel_max_pool,
  &ir_kernel_avg_pool,
  &ir_kernel_reduce_mean,
  &ir_kernel_softmax,
  &ir_kernel_batch_norm,
  &ir_kernel_interpolate,
  &ir_kernel_nv12_to_rgb,
  &ir_kernel_nv12_to_bgr,
  &ir_kernel_i420_to_rgb,
  &ir_kernel_i420_to_bgr,
  &ir_kernel_fake_quantize,
  &ir_kernel_prior_box_clustered,
  &ir_kernel_detection_output,
  NULL,
};

void
ir_register_compute_kernels (M2iOpRegistry *r)
{
  for (const M2iOpKernel *const *k = compute_kernels; *k; k++)
    m2i_op_registry_add (r, *k);
}
