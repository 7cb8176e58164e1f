#!/usr/bin/env python3
"""Compares what `edgegan generate` wrote with a reference written on x86-64:
the raw floats (.npy) within an absolute tolerance, and the PNG pixel by pixel
within one 8-bit level (a float that lands on a rounding boundary may round
either way). Standard library only, so it runs wherever the tests run.

usage: compare_generated.py GOT.npy WANT.npy GOT.png WANT.png [FLOAT_TOLERANCE]
"""
import struct
import sys
import zlib
from array import array


def read_npy_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    header_len = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if data[6] == 1 else 12) + header_len
    header = data[start - header_len:start].decode("latin1")
    if "'<f4'" not in header:
        sys.exit(f"{path}: expected little-endian float32, header {header.strip()}")
    shape = header.split("'shape':")[1].split(")")[0] + ")"
    values = array("f")
    values.frombytes(data[start:])
    return shape, values


def read_png(path):
    """Returns (width, height, channels, bytes) of an 8-bit grey/RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (0, 2, 6):
                sys.exit(f"{path}: unsupported PNG (depth {depth}, colour type {colour})")
            channels = {0: 1, 2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    out = bytearray(stride * height)
    prev = bytearray(stride)
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if filt == 1:
                line[x] = (line[x] + a) & 255
            elif filt == 2:
                line[x] = (line[x] + b) & 255
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return width, height, channels, bytes(out)


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    got_npy, want_npy, got_png, want_png = sys.argv[1:5]
    tolerance = float(sys.argv[5]) if len(sys.argv) == 6 else 1e-4
    got_shape, got = read_npy_f32(got_npy)
    want_shape, want = read_npy_f32(want_npy)
    if got_shape != want_shape:
        sys.exit(f"shape {got_shape} != reference {want_shape}")
    worst = max(abs(g - w) for g, w in zip(got, want))
    if worst > tolerance:
        sys.exit(f"floats differ from the reference by up to {worst:.3g} (> {tolerance:g})")
    gw, gh, gc, gpix = read_png(got_png)
    ww, wh, wc, wpix = read_png(want_png)
    if (gw, gh, gc) != (ww, wh, wc):
        sys.exit(f"PNG is {gw}x{gh}x{gc}, reference {ww}x{wh}x{wc}")
    levels = max(abs(g - w) for g, w in zip(gpix, wpix))
    if levels > 1:
        sys.exit(f"PNG pixels differ from the reference by up to {levels} levels")
    print(f"same as the reference: floats within {worst:.3g}, pixels within {levels} level(s)")


if __name__ == "__main__":
    main()
