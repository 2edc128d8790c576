/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* device-model.h — the simulated edge accelerator, in figures (not installed).
 *
 * Every cost model reads the device from here: the M2I block's planner
 * (m2i-plan.c, docs/m2i-engine.md "Cost model"), the compute engine's
 * convolution cost (npu/npu-conv.c, docs/npu.md "Cost model") and the
 * split partitioner (split/split-cost.c, docs/split.md "Cost"). The host
 * CPU's figures the partitioner weighs the device against stay in
 * split-cost.c: they describe the product's application cores, not the
 * device.
 *
 * Both engines share one clock (M2I_DEVICE_CLOCK_HZ, public: the device
 * counters count its cycles) and one DMA.
 */
#pragma once

#include <m2i-core/m2i/m2i-device.h>

/* Cycles per ns (the partitioner counts time in ns). */
#define DEVICE_CYCLES_PER_NS (M2I_DEVICE_CLOCK_HZ / G_GUINT64_CONSTANT (1000000000))

/* The DMA both engines move data with, overlapped with their compute. */
#define DEVICE_DMA_BYTES_PER_CYCLE 32

/* A tensor crossing between host and device: cache maintenance, doorbell,
 * completion interrupt. */
#define DEVICE_HOST_SYNC_NS 20000

/* ---- the M2I media block ---- */
#define DEVICE_M2I_TASK_SETUP_CYCLES 2000     /* descriptors, DMA programming */
#define DEVICE_M2I_CSC_PIXELS_PER_CYCLE 16
#define DEVICE_M2I_RESIZE_MACS_PER_CYCLE 32
#define DEVICE_M2I_VALUES_PER_CYCLE 32        /* convert, permute, norm as a task of their own */

/* ---- the int8 / fp16 compute engine ---- */
/* One 4x8x8 int8 MAC array (the AIE's mmul<4,8,8>); fp16 at a quarter of
 * that; depthwise layers use one lane of eight along the input block. */
#define DEVICE_NPU_INT8_MACS_PER_CYCLE 256
#define DEVICE_NPU_FP16_MACS_PER_CYCLE 64
/* Pooling and element-wise layers stream through the array's lanes. */
#define DEVICE_NPU_INT8_LANES 64
#define DEVICE_NPU_FP16_LANES 32
#define DEVICE_NPU_LAYER_SETUP_CYCLES 64
