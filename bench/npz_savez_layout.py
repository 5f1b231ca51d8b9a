#!/usr/bin/env python3
"""Rewrites an npz in the layout numpy's np.savez writes (standard library
only, no numpy needed): every .npy entry stored without compression through
zipfile's `open(name, 'w', force_zip64=True)`, exactly as
numpy.lib.npyio._savez does, so each entry's data lies wherever the local
header (30 bytes + name + a 20-byte zip64 extra field) and the 64-byte
padded .npy header put it: no alignment padding. The .npy bytes are copied
unchanged. Usage: npz_savez_layout.py IN.npz OUT.npz
Prints how many entries' data ended up unaligned to 4 bytes."""
import sys
import zipfile

src, dst = sys.argv[1], sys.argv[2]
unaligned = 0
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(
    dst, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zout:
  for info in zin.infolist():
    with zin.open(info) as f, zout.open(info.filename, "w",
                                        force_zip64=True) as g:
      while True:
        chunk = f.read(1 << 24)
        if not chunk:
          break
        g.write(chunk)
with zipfile.ZipFile(dst) as z, open(dst, "rb") as raw:
  for info in z.infolist():
    raw.seek(info.header_offset + 26)
    name_len = int.from_bytes(raw.read(2), "little")
    extra_len = int.from_bytes(raw.read(2), "little")
    start = info.header_offset + 30 + name_len + extra_len
    raw.seek(start + 6)
    head = raw.read(6)  # version major, minor, header length
    header = (10 + int.from_bytes(head[2:4], "little") if head[0] == 1 else
              12 + int.from_bytes(head[2:6], "little"))
    unaligned += (start + header) % 4 != 0
print(f"{unaligned} of {len(z.infolist())} entries unaligned to 4 bytes")
