#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Makes chelsea-450x300.nv12: scikit-image's chelsea.png (public domain,
Debian package python3-skimage) cropped to 450x300 and converted to NV12
with the BT.601 limited-range matrix (the inverse of the M2I csc), chroma
averaged over 2x2 blocks. Run: /usr/bin/python3 make-chelsea-nv12.py"""
import numpy as np
from skimage import data

rgb = data.chelsea()[:300, :450, :].astype(np.float64)
r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
y = 16 + 0.257 * r + 0.504 * g + 0.098 * b
u = 128 - 0.148 * r - 0.291 * g + 0.439 * b
v = 128 + 0.439 * r - 0.368 * g - 0.071 * b


def sub(c):
    return (c[0::2, 0::2] + c[1::2, 0::2] + c[0::2, 1::2] + c[1::2, 1::2]) / 4


def q(c):
    return np.clip(np.floor(c + 0.5), 0, 255).astype(np.uint8)


uv = np.empty((150, 450), np.uint8)
uv[:, 0::2] = q(sub(u))
uv[:, 1::2] = q(sub(v))
with open("chelsea-450x300.nv12", "wb") as f:
    f.write(q(y).tobytes())
    f.write(uv.tobytes())
