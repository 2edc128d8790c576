/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i.h — the M2I engine: formats, ops, planner and device. */
#pragma once

#include <m2i-core/m2i/m2i-format.h>
#include <m2i-core/m2i/m2i-ops.h>
#include <m2i-core/m2i/m2i-resize.h>
#include <m2i-core/m2i/m2i-plan.h>
#include <m2i-core/m2i/m2i-device.h>
#include <m2i-core/m2i/m2i-plan-cache.h>
