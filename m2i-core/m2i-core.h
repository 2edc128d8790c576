/* m2i-core.h — everything public in libm2icore. Applications may include the
 * folder headers one by one instead. */
#pragma once

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <base/m2i-cpu.h>
#include <base/m2i-parallel.h>
#include <m2i/m2i.h>
#include <ir/m2i-ir-types.h>
#include <ir/m2i-ir-op.h>
#include <ir/m2i-ir.h>
#include <mli/m2i-mli.h>
#include <npu/m2i-npu.h>
#include <split/m2i-split.h>
#include <analytics/m2i-track.h>
