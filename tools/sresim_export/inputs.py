"""Turning image files or .npy arrays into the model's input batch.

Images are decoded with Pillow, converted to RGB (or L with grayscale), resized to the
model's H x W with bilinear filtering (the whole image, aspect ratio not kept), scaled,
normalized per channel ((x * scale - mean) / std) and laid out NCHW or NHWC. A .npy
file is used as it is: one sample (the model's input shape without batch) or a batch;
integer arrays (token ids) stay integers, and are converted to the model input's type
when it runs (capture.as_input).
"""

from __future__ import annotations

import os

import numpy as np

from .files import check_file, load_npy

IMAGE_EXT = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".pgm", ".ppm"}


def load_image(path, size, grayscale=False, scale=1 / 255, mean=None, std=None, layout="nchw"):
    from PIL import Image

    with Image.open(path) as img:
        img = img.convert("L" if grayscale else "RGB")
        if size is not None and (img.height, img.width) != tuple(size):
            img = img.resize((size[1], size[0]), Image.BILINEAR)
        x = np.asarray(img, dtype=np.float32)
    if x.ndim == 2:
        x = x[:, :, None]
    # Computed in float32; a value beyond its range (a --scale of 1e38 times 255,
    # a --std of 1e-40) is told below in one line, not by numpy's warnings first.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        x = x * np.float32(scale)
        if mean is not None:
            x = x - np.asarray(mean, dtype=np.float32)
        if std is not None:
            x = x / np.asarray(std, dtype=np.float32)
    bad = int(x.size - np.count_nonzero(np.isfinite(x)))
    if bad:
        flags = f"--scale {scale:g}" + "".join(
            f", --{k} {' '.join(f'{v:g}' for v in vs)}" for k, vs in (("mean", mean), ("std", std))
            if vs is not None)
        raise ValueError(f"{path}: {bad} of {x.size} pixel values are beyond the float32 range "
                         f"(|x| up to {float(np.finfo(np.float32).max):.7g}) after {flags}")
    if layout == "nchw":
        x = x.transpose(2, 0, 1)
    return np.ascontiguousarray(x, dtype=np.float32)


def as_float32(arr, path):
    """The finite float array `arr` (of the file `path`) as float32. A value beyond the
    float32 range (a float64 of 1e300) is refused naming the file, before the cast would
    turn it into an infinity (with numpy's RuntimeWarning) to be blamed on NaN/inf values
    the file does not hold; sresim says the same of such a value in a bundle."""
    if arr.dtype.itemsize > 4 and arr.size:
        limit = float(np.finfo(np.float32).max)
        beyond = np.isfinite(arr) & (np.abs(arr) > limit)  # NaN/inf keep their own message
        n = int(np.count_nonzero(beyond))
        if n:
            first = float(arr[beyond].flat[0])
            raise ValueError(f"{path}: {n} of {arr.size} values are beyond the float32 range "
                             f"(float32 holds |x| up to {limit:.7g}), such as {first:g}")
    return arr.astype(np.float32)


def as_integers(arr, dtype, path):
    """The integer array `arr` (of the file `path`) as `dtype` (int64 for token ids, or the
    integer type of the model input it feeds). A value the type does not hold (a uint64
    of 2**64 - 1 as int64) is refused naming the file, before the cast would wrap it
    silently into another number (-1)."""
    info = np.iinfo(dtype)
    src = np.iinfo(arr.dtype)
    for bound, word in ((info.max, "up to"), (info.min, "down to")):
        # compared in the file's own type, where the bound is exact, when it holds it
        if (bound > src.max) if word == "up to" else (bound < src.min):
            continue
        beyond = arr > arr.dtype.type(bound) if word == "up to" else arr < arr.dtype.type(bound)
        n = int(np.count_nonzero(beyond))
        if n:
            raise ValueError(f"{path}: {n} of {arr.size} values are beyond {np.dtype(dtype).name} "
                             f"({word} {bound}), such as {arr[beyond].flat[0]}")
    return arr.astype(dtype)


def load_inputs(paths, sample_shape, **image_opts):
    """Stacks the samples of all `paths` into one float32 batch [N, *sample_shape].
    `sample_shape` may hold None for dynamic dims (then .npy files must agree)."""
    batch = []
    origin = []  # the file each sample of `batch` came from
    for path in paths:
        ext = os.path.splitext(path)[1].lower()
        if ext == ".npy":
            arr = load_npy(path)
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"{path}: {arr.dtype} values (expected floats, or integer token ids)")
            if arr.dtype.kind == "f":
                bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
                if bad:
                    raise ValueError(f"{path}: {bad} of {arr.size} values are NaN or infinite")
            arr = as_integers(arr, np.int64, path) if arr.dtype.kind in "iu" else as_float32(arr, path)
            if arr.ndim == len(sample_shape):
                arr = arr[None]
            if arr.ndim != len(sample_shape) + 1:
                raise ValueError(f"{path}: shape {arr.shape} does not fit the model input {sample_shape}")
            if len(arr) == 0:
                raise ValueError(f"{path}: 0 samples (shape {arr.shape}): a batch holds at least one")
            batch.extend(list(arr))
            origin.extend([path] * len(arr))
        elif ext in IMAGE_EXT:
            check_file(path, "an image")
            batch.append(load_image(path, **image_opts))
            origin.append(path)
        else:
            raise ValueError(f"{path}: not an image or .npy file")
    for path, sample in zip(origin, batch):
        for got, want in zip(sample.shape, sample_shape):
            if want is not None and got != want:
                raise ValueError(f"{path}: input sample shape {sample.shape} does not match model input {sample_shape}")
    for path, sample in zip(origin, batch):
        if sample.shape != batch[0].shape:
            raise ValueError(
                f"{path}: input sample shape {sample.shape} differs from {origin[0]}'s {batch[0].shape}"
            )
    if all(s.dtype.kind in "iu" for s in batch):
        return np.stack(batch).astype(np.int64)
    return np.stack(batch).astype(np.float32)
