#!/usr/bin/env python3
"""The Kármán street's validation plot (docs/ink.md): the transverse velocity four diameters
behind the cylinder over time, and its spectrum, from `fluidlab simulate --format npy` frames.

    fluidlab simulate SCENE --seconds 8 --export DIR --every 2 --format npy
    python3 scripts/plot_karman.py DIR OUT.png [dt_per_frame]

Needs numpy and matplotlib. SCENE is scenes/ink/karman.toml (or a copy with other cells): the
probe and the Strouhal number use its cylinder (D = 0.12 m at (0.4, 0.37) m, U = 1 m/s).
"""
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

directory, out = sys.argv[1], sys.argv[2]
dt = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
D, U, centre, width = 0.12, 1.0, (0.4, 0.37), 2.0
files = sorted(glob.glob(os.path.join(directory, "frame_*_velocity.npy")))
first = np.load(files[0])
ny, nx, _ = first.shape
dx = width / nx
i, j = int((centre[0] + 4 * D) / dx), int(centre[1] / dx)
t = np.arange(len(files)) * dt
v = np.array([np.load(f)[j, i, 1] for f in files])
settled = t > 3.0
ts, vs = t[settled], v[settled] - v[settled].mean()
spectrum = np.abs(np.fft.rfft(vs * np.hanning(len(vs))))
freq = np.fft.rfftfreq(len(vs), dt)
peak = freq[1:][np.argmax(spectrum[1:])]
strouhal = peak * D / U

fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.4))
a.plot(t, v, lw=1.2)
a.axvline(3.0, color="grey", ls=":", lw=1)
a.set_xlabel("t (s)")
a.set_ylabel("transverse velocity v (m/s)")
a.set_title(f"4 D behind the cylinder ({nx} × {ny} cells)")
b.plot(freq * D / U, spectrum / spectrum.max(), lw=1.2, label=f"fluidlab: St = {strouhal:.3f}")
b.axvspan(0.19, 0.21, color="orange", alpha=0.3, label="experiment: St ≈ 0.2 (Re 300–2·10⁵)")
b.set_xlim(0, 0.8)
b.set_xlabel("Strouhal number f·D/U")
b.set_ylabel("spectrum of v, t > 3 s (normalised)")
b.legend(loc="upper right", fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"St = {strouhal:.3f} (peak {peak:.3f} Hz), {len(files)} frames")
