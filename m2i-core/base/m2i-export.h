/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-export.h — M2I_API marks the functions and variables libm2icore
 * exports. The library is built with hidden visibility: whatever an
 * installed header does not declare with M2I_API stays private. */
#pragma once

#if defined(M2I_CORE_COMPILATION) && defined(__GNUC__)
#define M2I_API __attribute__ ((visibility ("default"))) extern
#else
#define M2I_API extern
#endif
