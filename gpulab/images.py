"""Procedural test images (nothing downloaded): edges, gradients and fine detail in a few lines.

Used by the image-processing chapter so that inversion and blurring have something visible to act on.
"""

import numpy as np


def test_image(height=64, width=64):
    """RGBA float32 image in [0, 1]: colour gradients, a disc, a checkerboard corner, thin stripes."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    u, v = x / max(width - 1, 1), y / max(height - 1, 1)
    img = np.zeros((height, width, 4), np.float32)
    img[..., 0] = u
    img[..., 1] = v
    img[..., 2] = 0.5 + 0.5 * np.sin(6.0 * (u + v))
    disc = (u - 0.62) ** 2 + (v - 0.4) ** 2 < 0.06
    img[disc, :3] = (0.95, 0.85, 0.1)
    checker = ((x // 4 + y // 4) % 2 == 0) & (u < 0.35) & (v > 0.6)
    img[checker, :3] = 1.0
    img[(u < 0.35) & (v > 0.6) & ~checker, :3] = 0.0
    stripes = (u > 0.7) & (v > 0.7) & (x % 3 == 0)
    img[stripes, :3] = 0.0
    img[..., 3] = 1.0
    return img


def grey(img):
    """Luminance (Rec. 709 weights) of an RGBA or RGB float image, as float32 (h, w)."""
    return (0.2126 * img[..., 0] + 0.7152 * img[..., 1] + 0.0722 * img[..., 2]).astype(np.float32)


def box_blur_reference(img, radius):
    """numpy reference of a (2R+1)^2 box blur with clamp-to-edge borders (float64 sums)."""
    h, w = img.shape
    pad = np.pad(img.astype(np.float64), radius, mode="edge")
    out = np.zeros((h, w))
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            out += pad[dy : dy + h, dx : dx + w]
    return (out / (2 * radius + 1) ** 2).astype(np.float32)


def show(*images, titles=None, size=3.0):
    """Show images side by side (RGBA/RGB shown as colour, 2-D as grey), returns the figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(images), figsize=(size * len(images), size))
    axes = np.atleast_1d(axes)
    for i, (ax, im) in enumerate(zip(axes, images)):
        if im.ndim == 2:
            ax.imshow(im, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        else:
            ax.imshow(np.clip(im, 0, 1), interpolation="nearest")
        ax.set_axis_off()
        if titles:
            ax.set_title(titles[i])
    fig.tight_layout()
    return fig
