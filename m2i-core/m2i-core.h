/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-core.h — everything public in libm2icore. Applications may include the
 * folder headers one by one instead. */
#pragma once

#include <m2i-core/base/m2i-align.h>
#include <m2i-core/base/m2i-error.h>
#include <m2i-core/base/m2i-fp16.h>
#include <m2i-core/base/m2i-cpu.h>
#include <m2i-core/base/m2i-parallel.h>
#include <m2i-core/m2i/m2i.h>
#include <m2i-core/ir/m2i-ir-types.h>
#include <m2i-core/ir/m2i-ir-op.h>
#include <m2i-core/ir/m2i-ir.h>
#include <m2i-core/mli/m2i-mli.h>
#include <m2i-core/npu/m2i-npu.h>
#include <m2i-core/split/m2i-split.h>
#include <m2i-core/infer/m2i-infer.h>
#include <m2i-core/infer/m2i-model-info.h>
#include <m2i-core/infer/m2i-infer-queue.h>
#include <m2i-core/infer/m2i-infer-roi.h>
#include <m2i-core/analytics/m2i-track.h>
