#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Makes tests/data/ir/astronaut-272x160.ppm, the photo the person-detection
test runs on: scikit-image's public-domain astronaut.png (Eileen Collins,
shipped by Debian's python3-skimage), scaled to 100x100 and centred on a
272x160 grey canvas: half the input size of person-detection-retail-0013
(544x320; the test and m2i-ir-run scale it up 2x), the person a standing
figure in a wider scene as the detector expects. The person's square spans
x in [86, 186) and y in [30, 130): [0.316, 0.684] x [0.1875, 0.8125] in
normalised coordinates. Binary PPM (P6), RGB. Run with /usr/bin/python3."""
import os

import numpy as np
from PIL import Image
from skimage import data

W, H, SIDE = 272, 160, 100
img = Image.fromarray(data.astronaut()).resize((SIDE, SIDE), Image.BILINEAR)
canvas = np.full((H, W, 3), 128, np.uint8)
x0, y0 = (W - SIDE) // 2, (H - SIDE) // 2
canvas[y0:y0 + SIDE, x0:x0 + SIDE] = np.asarray(img)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "astronaut-272x160.ppm")
with open(out, "wb") as f:
    f.write(b"P6\n%d %d\n255\n" % (W, H))
    f.write(canvas.tobytes())
print(out, "person in x [%d, %d) y [%d, %d)" % (x0, x0 + SIDE, y0, y0 + SIDE))
