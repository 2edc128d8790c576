/* Registration of the compute kernels (kernels/) into the default registry. */
#include "ir-private.h"
#include "kernels/kernels-private.h"

const M2iOpKernel *const m2i_compute_kernels[] = {
  &m2i_kernel_convolution,
  &m2i_kernel_group_convolution,
  &m2i_kernel_matmul,
  &m2i_kernel_add,
  &m2i_kernel_subtract,
  &m2i_kernel_multiply,
  &m2i_kernel_divide,
  &m2i_kernel_relu,
  &m2i_kernel_prelu,
  &m2i_kernel_clamp,
  &m2i_kernel_sigmoid,
  &m2i_kernel_exp,
  &m2i_kernel_max_pool,
  &m2i_kernel_avg_pool,
  &m2i_kernel_reduce_mean,
  &m2i_kernel_softmax,
  &m2i_kernel_batch_norm,
  &m2i_kernel_interpolate,
  &m2i_kernel_nv12_to_rgb,
  &m2i_kernel_nv12_to_bgr,
  &m2i_kernel_i420_to_rgb,
  &m2i_kernel_i420_to_bgr,
  &m2i_kernel_fake_quantize,
  &m2i_kernel_prior_box_clustered,
  &m2i_kernel_detection_output,
  &m2i_kernel_gather_nd,
  &m2i_kernel_gather_elements,
  &m2i_kernel_scatter_update,
  &m2i_kernel_scatter_nd_update,
  &m2i_kernel_scatter_elements_update,
  &m2i_kernel_depth_to_space,
  &m2i_kernel_space_to_depth,
  &m2i_kernel_shuffle_channels,
  &m2i_kernel_convolution_backprop_data,
  &m2i_kernel_group_convolution_backprop_data,
  &m2i_kernel_topk,
  &m2i_kernel_non_max_suppression,
  &m2i_kernel_prior_box,
  &m2i_kernel_region_yolo,
  &m2i_kernel_reorg_yolo,
  &m2i_kernel_proposal,
  &m2i_kernel_roi_pooling,
  &m2i_kernel_roi_align,
  &m2i_kernel_ctc_greedy_decoder,
  &m2i_kernel_ctc_greedy_decoder_seq_len,
  &m2i_kernel_lstm_sequence,
  &m2i_kernel_gru_sequence,
  &m2i_kernel_rnn_sequence,
  &m2i_kernel_lstm_cell,
  &m2i_kernel_gru_cell,
  &m2i_kernel_rnn_cell,
  NULL,
};

void
m2i_ir_register_compute_kernels (M2iOpRegistry *r)
{
  for (const M2iOpKernel *const *k = m2i_compute_kernels; *k; k++)
    m2i_op_registry_add (r, *k);
}
