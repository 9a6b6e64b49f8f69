#!/usr/bin/env python3
"""The pool's validation plot (docs/pool.md), from `fluidlab simulate --stats` runs:

  left:  the wave front of one drop (the farthest node at a tenth of the highest |height|)
         against c·t, on the height field and on the spring lattice with horizontal motion
         locked; the slopes are the measured wave speeds;
  right: the energy of the same drop in a walled pool without damping (constant but for the
         symplectic scheme's bounded O(dt) wobble) and with damping d = 0.3 /s against
         E₀·e^(−d·t).

    python3 scripts/plot_pool.py target/release/fluidlab docs/images/pool-validation.png

Needs numpy and matplotlib.
"""
import json
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

binary, out = sys.argv[1], sys.argv[2]
C = 0.5


def scene(model, edges, damping, nodes=257, extra=""):
    return f"""kind = "pool"
description = "validation"
[pool]
nodes = {nodes}
size = 2.0
[surface]
model = "{model}"
edges = "{edges}"
wave_speed = {C}
damping = {damping}
dt = 0.02
[springs]
horizontal = false
{extra}
[[drop]]
time = 0.0
position = [1.0, 1.0]
radius = 0.03125
amplitude = 0.0001
"""


def run(text, seconds):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.toml")
        stats = os.path.join(d, "stats.jsonl")
        open(path, "w").write(text)
        subprocess.run(
            [binary, "simulate", path, "--seconds", str(seconds), "--every", "1",
             "--stats", stats, "--quiet", "--backend", "cpu"],
            check=True,
        )
        return [json.loads(line) for line in open(stats)]


fig, (front, energy) = plt.subplots(1, 2, figsize=(11, 4.2))
for model, style in [("wave", "o"), ("springs", "x")]:
    rows = run(scene(model, "open", 0.0), 1.6)
    t = np.array([r["time"] for r in rows])
    r = np.array([r["front_radius"] for r in rows])
    keep = (t > 0.3) & (t < 1.6)
    slope, offset = np.polyfit(t[keep], r[keep], 1)
    label = f"{model}{' (horizontal locked)' if model == 'springs' else ''}: {slope:.3f} m/s"
    front.plot(t[::3], r[::3], style, ms=4, label=label)
    print(f"{model}: front speed {slope:.4f} m/s (c = {C})")
tt = np.linspace(0, 1.6, 50)
front.plot(tt, C * tt + offset, "k-", lw=1, label=f"c·t + {offset:.3f} m, c = {C} m/s")
front.set_xlabel("t (s)")
front.set_ylabel("front radius (m)")
front.set_title("A drop's wave front travels at c")
front.legend(fontsize=8)

for damping, colour in [(0.0, "C0"), (0.3, "C1")]:
    rows = run(scene("wave", "pool", damping, nodes=129), 6.0)
    rows = [r for r in rows if r["time"] > 0]  # the first row is before the drop
    t = np.array([r["time"] for r in rows])
    e = np.array([r["energy"] for r in rows])
    energy.plot(t, e / e[4], colour, label=f"damping {damping} /s")
    if damping > 0:
        energy.plot(t, np.exp(-damping * (t - t[4])), "k--", lw=1, label="e^(−d·(t − t₀))")
    print(f"damping {damping}: energy at 6 s / at t0 = {e[-1] / e[4]:.4f}")
energy.set_xlabel("t (s)")
energy.set_ylabel("energy / energy at t₀ = 0.1 s")
energy.set_title("Energy: kept without damping, e^(−d·t) with it")
energy.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=90)
