#!/usr/bin/env python3
"""Pictures for scripts/gpu_check.sh's image-to-image check, standard library only
(NumPy, where installed, only makes decoding faster):

  picture_check.py make OUT.png WIDTH HEIGHT   a deterministic RGB test picture (edges,
                                               gradients and fine texture, so a wrong tap
                                               or tile seam shows)
  picture_check.py compare GOT.png WANT.png [LEVELS]
                                               same size and channels, every byte within
                                               LEVELS (default 1: a value on a rounding
                                               boundary may round either way); prints the
                                               largest difference, exits 1 past LEVELS
"""
import struct
import sys
import zlib

try:
    import numpy as np
except ImportError:  # the slow path decodes byte by byte
    np = None


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def make(path, width, height):
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            rows += bytes(((x * 7 + y * 3) & 255, (x * y // 13 + (x ^ y)) & 255, 255 if (x // 32 + y // 32) % 2 else (x * 255) // max(1, width - 1)))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def unfilter_row(filt, line, prev, channels):
    """PNG filter types 0-4 undone in place on `line` (a bytearray), given the row above."""
    n = len(line)
    if filt == 0:
        return line
    if filt == 2:
        if np is not None:
            return bytearray((np.frombuffer(line, np.uint8) + np.frombuffer(prev, np.uint8)).tobytes())
        return bytearray((line[x] + prev[x]) & 255 for x in range(n))
    if filt == 1 and np is not None:
        # Sub: each byte adds the byte one pixel left, i.e. a running sum per channel mod 256.
        v = np.frombuffer(line, np.uint8).reshape(-1, channels).astype(np.uint64)
        return bytearray((np.cumsum(v, axis=0) & 255).astype(np.uint8).tobytes())
    for x in range(n):
        a = line[x - channels] if x >= channels else 0
        b = prev[x]
        if filt == 1:
            line[x] = (line[x] + a) & 255
        elif filt == 3:
            line[x] = (line[x] + (a + b) // 2) & 255
        elif filt == 4:
            c = prev[x - channels] if x >= channels else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        else:
            sys.exit(f"unknown PNG filter {filt}")
    return line


def read_png(path):
    """(width, height, channels, bytes) of an 8-bit, non-interlaced grey/RGB/grey+alpha/RGBA PNG."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat = 8, bytearray()
    width = height = channels = None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body[:13])
            if depth != 8 or colour not in (0, 2, 4, 6) or interlace:
                sys.exit(f"{path}: unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    out = bytearray(stride * height)
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = unfilter_row(raw[start], bytearray(raw[start + 1:start + 1 + stride]), prev, channels)
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return width, height, channels, bytes(out)


def compare(got_path, want_path, levels):
    gw, gh, gc, got = read_png(got_path)
    ww, wh, wc, want = read_png(want_path)
    if (gw, gh, gc) != (ww, wh, wc):
        print(f"{got_path} is {gw}x{gh}x{gc}, {want_path} {ww}x{wh}x{wc}")
        return 1
    if np is not None:
        diff = np.abs(np.frombuffer(got, np.uint8).astype(np.int16) - np.frombuffer(want, np.uint8).astype(np.int16))
        worst, count = int(diff.max()), int((diff > levels).sum())
    else:
        worst = max(abs(g - w) for g, w in zip(got, want))
        count = sum(abs(g - w) > levels for g, w in zip(got, want))
    verdict = "within" if worst <= levels else "OVER"
    print(f"{got_path} vs {want_path} ({gw}x{gh}x{gc}): largest difference {worst} level(s), {verdict} {levels}; {count} bytes over")
    return 0 if worst <= levels else 1


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if len(sys.argv) in (4, 5) and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
