/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* demo-analytics.h — `m2i-infer-demo analytics`: detector, tracker, region
 * classifier, overlay and JSON on video made from the test photo (see
 * demo-analytics.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Its command-line options (added to the program's). */
extern GOptionEntry demo_analytics_entries[];

/* Runs the demo (m2iinfer device=@device when not NULL); the exit status:
 * 0 when it ran through (or was skipped for want of the detector), 1 when
 * frames, JSON lines or classifications are missing, 2 on an error. */
int demo_analytics_run (const char *device);

G_END_DECLS
