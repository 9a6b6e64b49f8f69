#!/usr/bin/env python3
"""The PBF pictures the project renders itself, rendered again: docs/images/dam-break.png (the
README's and docs/fluid-rendering.md's), the "after" halves of viewer-before-after-1/2.png,
viewer-anisotropy-1/2.png and viewer-anisotropy-crop.png (docs/fluid-rendering.md), and
viewer-foam-1/2.png (docs/foam.md).

It runs `fluidlab render dam-break --frames 3 --steps-per-frame 40 --size 1280x720 --backend cpu`
three times (with `--foam`, as is, with `--spheres`; about a minute each on Mesa llvmpipe) and
builds each picture from frames 1 and 2 (0.66 s and 1.33 s): shrunk to 640x360 by a 2 x 2 box
average (rounded to the nearest level), side by side; the anisotropy crop is frame 2 at full
size, pixels 380-880 x 260-560 from the top. The "before" halves of viewer-before-after-N.png
(the renderer before issue 14) are kept from the pictures in docs/images. The investigations'
before/after pictures of docs/render-notes-*.md and viewer-foam-obstacles.png (the obstacle rule
before and after) are studies of one change and are not made here.

For each picture it prints how many pixels differ from the one in docs/images (and how many by
more than 20 of 255 in a channel) and writes it there only where it differs.

    scripts/pbf-pictures.py [--fluidlab target/release/fluidlab] [--out DIR] [--no-render]

`--no-render` reuses DIR/foam, DIR/plain and DIR/spheres from an earlier run. Pure Python (zlib
only): PIL is not needed.
"""

import argparse
import os
import struct
import subprocess
import sys
import zlib

IMAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'docs', 'images')
RENDER = ['render', 'dam-break', '--frames', '3', '--steps-per-frame', '40', '--size', '1280x720',
          '--backend', 'cpu', '--overwrite']
RUNS = {'foam': ['--foam'], 'plain': [], 'spheres': ['--spheres']}


def read_png(path):
    """An 8-bit greyscale, RGB or RGBA PNG (not interlaced) as (width, height, RGB bytes)."""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit(f'{path}: not a PNG')
    pos, idat = 8, b''
    while pos < len(data):
        n, = struct.unpack('>I', data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            if depth != 8 or interlace or ctype not in (0, 2, 6):
                sys.exit(f'{path}: bit depth {depth}, colour type {ctype}, interlace '
                         f'{interlace}: only 8-bit grey, RGB or RGBA, not interlaced')
            ch = {0: 1, 2: 3, 6: 4}[ctype]
        elif kind == b'IDAT':
            idat += body
        elif kind == b'IEND':
            break
    raw = zlib.decompress(idat)
    stride = w * ch
    prev = bytearray(stride)
    rgb = bytearray(w * h * 3)
    i = 0
    for y in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(ch, stride):
                line[x] = (line[x] + line[x - ch]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                a = line[x - ch] if x >= ch else 0
                line[x] = (line[x] + ((a + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - ch] if x >= ch else 0
                b, c = prev[x], (prev[x - ch] if x >= ch else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        for x in range(w):
            px = line[x * ch:x * ch + 3] if ch >= 3 else bytes([line[x]]) * 3
            rgb[(y * w + x) * 3:(y * w + x) * 3 + 3] = px
    return w, h, rgb


def write_png(path, picture):
    w, h, rgb = picture
    raw = b''.join(b'\x00' + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(kind, body):
        crc = zlib.crc32(kind + body) & 0xffffffff
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', crc)

    with open(path, 'wb') as out:
        out.write(b'\x89PNG\r\n\x1a\n'
                  + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                  + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def shrink(picture):
    """A 2 x 2 box average, rounded to the nearest level."""
    w, h, p = picture
    W, H = w // 2, h // 2
    out = bytearray(W * H * 3)
    for y in range(H):
        r0, r1 = 2 * y * w * 3, (2 * y + 1) * w * 3
        for x in range(W):
            a, b = r0 + 6 * x, r1 + 6 * x
            for c in range(3):
                out[(y * W + x) * 3 + c] = (p[a + c] + p[a + 3 + c] + p[b + c] + p[b + 3 + c]
                                            + 2) // 4
    return W, H, out


def crop(picture, x0, y0, cw, ch):
    w, _, p = picture
    out = bytearray(cw * ch * 3)
    for y in range(ch):
        start = ((y0 + y) * w + x0) * 3
        out[y * cw * 3:(y + 1) * cw * 3] = p[start:start + cw * 3]
    return cw, ch, out


def side_by_side(left, right, gap=0):
    """`left` and `right` with `gap` white columns between them."""
    (lw, h, lp), (rw, rh, rp) = left, right
    assert h == rh, (h, rh)
    w = lw + gap + rw
    out = bytearray(w * h * 3)
    white = b'\xff' * (3 * gap)
    for y in range(h):
        out[y * w * 3:(y + 1) * w * 3] = (lp[y * lw * 3:(y + 1) * lw * 3] + white
                                          + rp[y * rw * 3:(y + 1) * rw * 3])
    return w, h, out


def difference(a, b):
    """Pixels that differ, and those by more than 20 levels in a channel."""
    if a[:2] != b[:2]:
        return a[0] * a[1], a[0] * a[1]
    pa, pb = a[2], b[2]
    changed = over_20 = 0
    for i in range(0, len(pa), 3):
        d = max(abs(pa[i] - pb[i]), abs(pa[i + 1] - pb[i + 1]), abs(pa[i + 2] - pb[i + 2]))
        changed += d > 0
        over_20 += d > 20
    return changed, over_20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--fluidlab', default='target/release/fluidlab')
    parser.add_argument('--out', default='target/pbf-pictures', help='where the renders go')
    parser.add_argument('--no-render', action='store_true')
    args = parser.parse_args()
    for run, extra in RUNS.items():
        out = os.path.join(args.out, run)
        if not args.no_render:
            print('fluidlab', ' '.join(RENDER + extra), '--out', out, flush=True)
            subprocess.run([args.fluidlab] + RENDER + extra + ['--out', out, '--quiet'],
                           check=True)

    def frame(run, n):
        return read_png(os.path.join(args.out, run, f'frame_000{n}.png'))

    foam = {n: shrink(frame('foam', n)) for n in (1, 2)}
    plain = {n: shrink(frame('plain', n)) for n in (1, 2)}
    spheres = {n: shrink(frame('spheres', n)) for n in (1, 2)}
    pictures = {'dam-break.png': foam[1]}
    for n in (1, 2):
        before = crop(read_png(os.path.join(IMAGES, f'viewer-before-after-{n}.png')), 0, 0, 640,
                      360)
        pictures[f'viewer-before-after-{n}.png'] = side_by_side(before, foam[n], gap=4)
        pictures[f'viewer-anisotropy-{n}.png'] = side_by_side(spheres[n], plain[n])
        pictures[f'viewer-foam-{n}.png'] = side_by_side(plain[n], foam[n])
    pictures['viewer-anisotropy-crop.png'] = side_by_side(
        crop(frame('spheres', 2), 380, 260, 500, 300), crop(frame('plain', 2), 380, 260, 500, 300))
    for name, picture in pictures.items():
        path = os.path.join(IMAGES, name)
        changed, over_20 = difference(read_png(path), picture)
        print(f'{name}: {changed} of {picture[0] * picture[1]} pixels differ, {over_20} by more '
              f'than 20 of 255', flush=True)
        if changed:
            write_png(path, picture)


if __name__ == '__main__':
    main()
