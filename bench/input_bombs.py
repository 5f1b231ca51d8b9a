#!/usr/bin/env python3
"""Builds issue 24's input bombs in DIR (zlib streaming: no inflated buffer
is ever allocated) and times `jax2onnx convert` on each with /usr/bin/time,
printing one Markdown table row per bomb (wall seconds, peak RSS).

  python3 bench/input_bombs.py build/bin/jax2onnx /tmp/bombs

Only for a binary with issue 24's bounds: an older one reads the sparse
1 TiB .jaxpr whole and runs the machine out of memory.

Bombs:
  npz_small_header  const_0 with an f32[3,4] .npy header, then 3.75 GiB of
                    deflated zeros (a 3.7 MB file)
  npz_unused_entry  an unused entry `junk` holding a valid 3.75 GiB array,
                    before a const_0 of the first kind
  npz_header_vs_binder  const_0 whose header honestly claims 3.75 GiB
  jaxpr_sparse_1tib a sparse 1 TiB .jaxpr (refused from its size)
  jaxpr_dev_zero    /dev/zero as the .jaxpr (read up to the 512 MiB limit)
"""
import os
import struct
import subprocess
import sys
import zlib

CHUNK = 1 << 20
CHUNKS = 3840  # 3.75 GiB, below the zip64 limit


def npy_first_chunk(shape_text):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (
        shape_text)
    while (10 + len(header) + 1) % 64:
        header += " "
    header += "\n"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + \
        header.encode("latin1")
    return data + b"\0" * (CHUNK - len(data))


def write_bomb(path, entries):
    """entries: (name, first_chunk). Streams CHUNKS chunks per entry."""
    zeros = b"\0" * CHUNK
    central = b""
    with open(path, "wb") as out:
        for name, first in entries:
            offset = out.tell()
            local_at = offset
            out.write(b"\0" * (30 + len(name)))  # header, patched below
            comp = zlib.compressobj(1, zlib.DEFLATED, -15)
            crc = 0
            csize = 0
            for k in range(CHUNKS):
                block = first if k == 0 else zeros
                crc = zlib.crc32(block, crc)
                piece = comp.compress(block)
                out.write(piece)
                csize += len(piece)
            piece = comp.flush()
            out.write(piece)
            csize += len(piece)
            size = CHUNK * CHUNKS
            local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, 8, 0, 0x21,
                                crc, csize, size, len(name), 0) + name
            end = out.tell()
            out.seek(local_at)
            out.write(local)
            out.seek(end)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20,
                                   0, 8, 0, 0x21, crc, csize, size, len(name),
                                   0, 0, 0, 0, 0, offset) + name
        cd_at = out.tell()
        out.write(central)
        out.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries),
                              len(entries), len(central), cd_at, 0))


JAXPR = ("{ lambda c:f32[3,4]; a:f32[3,4]. let\n"
         "    b:f32[3,4] = add a c\n  in (b,) }\n")


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    honest = "(%d,)" % ((CHUNK * CHUNKS - 128) // 4)
    cases = {
        "npz_small_header": [(b"const_0.npy", npy_first_chunk("(3, 4)"))],
        "npz_unused_entry": [(b"junk.npy", npy_first_chunk(honest)),
                             (b"const_0.npy", npy_first_chunk("(3, 4)"))],
        "npz_header_vs_binder": [(b"const_0.npy", npy_first_chunk(honest))],
    }
    runs = []
    for name, entries in cases.items():
        stem = os.path.join(out_dir, name)
        with open(stem + ".jaxpr", "w") as f:
            f.write(JAXPR)
        if not os.path.exists(stem + ".npz"):
            write_bomb(stem + ".npz", entries)
        runs.append((name, stem + ".jaxpr",
                     os.path.getsize(stem + ".npz")))
    sparse = os.path.join(out_dir, "jaxpr_sparse_1tib.jaxpr")
    with open(sparse, "wb") as f:
        f.truncate(1 << 40)
    runs.append(("jaxpr_sparse_1tib", sparse, 0))
    zero = os.path.join(out_dir, "jaxpr_dev_zero.jaxpr")
    if not os.path.lexists(zero):
        os.symlink("/dev/zero", zero)
    runs.append(("jaxpr_dev_zero", zero, 0))
    print("| bomb | file bytes | exit | wall s | peak RSS MB | message |")
    print("|---|---|---|---|---|---|")
    for name, path, size in runs:
        r = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", binary,
                            "convert", path, "-o",
                            os.path.join(out_dir, name + ".onnx")],
                           capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        wall, rss = lines[-1].split()[1:3]
        message = lines[0][:90] if len(lines) > 1 else ""
        print("| %s | %d | %d | %s | %.1f | %s |" % (
            name, size, r.returncode, wall, int(rss) / 1024.0,
            message.replace("|", "/")))


if __name__ == "__main__":
    main()
