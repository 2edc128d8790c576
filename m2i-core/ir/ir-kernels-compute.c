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
  &ir_kernel_gather_nd,
  &ir_kernel_gather_elements,
  &ir_kernel_scatter_update,
  &ir_kernel_scatter_nd_update,
  &ir_kernel_scatter_elements_update,
  &ir_kernel_depth_to_space,
  &ir_kernel_space_to_depth,
  &ir_kernel_shuffle_channels,
  &ir_kernel_convolution_backprop_data,
  &ir_kernel_group_convolution_backprop_data,
  &ir_kernel_topk,
  &ir_kernel_non_max_suppression,
  &ir_kernel_prior_box,
  &ir_kernel_region_yolo,
  &ir_kernel_reorg_yolo,
  &ir_kernel_proposal,
  &ir_kernel_roi_pooling,
  &ir_kernel_roi_align,
  &ir_kernel_ctc_greedy_decoder,
  &ir_kernel_ctc_greedy_decoder_seq_len,
  &ir_kernel_lstm_sequence,
  &ir_kernel_gru_sequence,
  &ir_kernel_rnn_sequence,
  &ir_kernel_lstm_cell,
  &ir_kernel_gru_cell,
  &ir_kernel_rnn_cell,
  &ir_kernel_non_zero,
  NULL,
};

void
ir_register_compute_kernels (M2iOpRegistry *r)
{
  for (const M2iOpKernel *const *k = compute_kernels; *k; k++)
    m2i_op_registry_add (r, *k);
}
