#!/usr/bin/env python3
"""The particles kind's validation plot (docs/particles/validation.md), from what the validation tests
measured (`tests/particles_validation.rs` writes it to target/tmp/particles-validation/):

  left:   a cloth pinned along its top row swings as the hanging chain: its ω over the
          continuous chain's (j₀₁/2)·√(g/L) against n, for Verlet, symplectic Euler and XPBD,
          beside the discrete chain's; inset: the bottom row's offset, n = 16, Verlet,
          against cos(ω_chain·t);
  middle: the static strain of the top gap of an 11² hanging cloth, XPBD at compliance 1/k
          against its iterations, at 24 and 96 substeps, beside the springs' (Verlet) and the
          weight below over the springs crossing the gap;
  right:  how much a 10⁻³·h disturbance of a free 16² cloth grows in 2000 steps against its
          stiffness, over 4m/(6·dt²) (the lattice's ω² = 6k/m at dt·ω = 2).

    python3 scripts/plot_particles.py docs/images/particles-validation.png [--no-test]

Runs `cargo test --release --test particles_validation` first (--no-test: plot what the last
run wrote). Needs numpy and matplotlib.
"""
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

out = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--no-test" not in sys.argv:
    subprocess.run(["cargo", "test", "--release", "--test", "particles_validation"],
                   cwd=root, check=True)
data = os.path.join(root, "target", "tmp", "particles-validation")
load = lambda name: json.load(open(os.path.join(data, name + ".json")))
chain, strain, stability = load("chain"), load("strain"), load("stability")
weak, chain = chain["weaker_gravity"], chain["runs"]
print(f"chain under 10 % less gravity (n = 11, Verlet): {weak['to_chain']:+.2%} off the discrete "
      f"chain, {weak['to_continuum']:+.2%} off the continuum (at g = 9.82)")
G, J01 = 9.82, 2.404825557695773


def discrete_chain(n, g=G, length=1.0):
    """ω₁ of n − 1 equal masses hanging from a pin, n − 1 equal links: the cloth's rows."""
    rows, h = n - 1, length / (n - 1)
    c = np.array([(rows - j) * g / h for j in range(rows)])  # the gap above row j + 1
    a = np.diag(c + np.append(c[1:], 0.0)) - np.diag(c[1:], 1) - np.diag(c[1:], -1)
    return np.sqrt(np.linalg.eigvalsh(a)[0])


fig, (swing, stiff, blow) = plt.subplots(1, 3, figsize=(13.3, 4.6))
ns = np.arange(4, 65)
ratio = [discrete_chain(n) / (J01 / 2 * np.sqrt(G)) for n in ns]
swing.plot(ns, ratio, "k-", lw=1, label="discrete chain, 1 m")
swing.axhline(1.0, color="grey", ls=":", lw=1)
for (name, iterations), style in [(("verlet", 1), "o"), (("euler", 1), "x"), (("xpbd", 5), "s")]:
    runs = [r for r in chain if r["integrator"] == name]
    label = name if name != "xpbd" else f"xpbd × {iterations}"
    swing.plot([r["n"] for r in runs], [r["omega"] / r["continuum"] for r in runs], style,
               ms=6, mfc="none", label=label)
    for r in runs:
        print(f"chain {name:6} n = {r['n']:2}: ω {r['omega']:.4f} rad/s, discrete chain "
              f"{r['chain']:.4f} ({r['omega'] / r['chain'] - 1:+.2%}), continuum "
              f"{r['continuum']:.4f} ({r['omega'] / r['continuum'] - 1:+.2%}), L {r['length']:.4f} m")
swing.set_xlabel("n (nodes per side)")
swing.set_ylabel("ω / ((j₀₁/2)·√(g/L))")
swing.set_title("Hanging chain: ω₁ against the continuum")
swing.set_ylim(0.94, 1.01)
swing.legend(fontsize=8, loc="center right")
inset = swing.inset_axes([0.42, 0.1, 0.54, 0.24])
r = next(r for r in chain if r["integrator"] == "verlet" and r["n"] == 16)
z = np.array(r["offsets"]) * 1000
t = np.arange(len(z)) * r["dt"]
inset.plot(t, z, lw=1.5)
inset.plot(t, z[0] * np.cos(r["chain"] * t), "k--", lw=0.8)
inset.set_xlabel("t (s)", fontsize=7, labelpad=0)
inset.set_ylabel("z (mm)", fontsize=7, labelpad=0)
inset.tick_params(labelsize=6)

xp = strain["xpbd"]
for substeps, style in [(24, "o-"), (96, "s--")]:
    runs = [x for x in xp if x["substeps"] == substeps]
    stiff.plot([x["iterations"] for x in runs], [x["top"] * 100 for x in runs], style,
               mfc="none", label=f"XPBD, {substeps} substeps")
    for x in runs:
        print(f"strain xpbd × {x['iterations']:2}, {substeps} substeps: top gap "
              f"{x['top']:.5f} ({x['top'] / strain['springs'] - 1:+.1%} of the springs'), "
              f"max {x['max']:.5f}, kinetic energy {x['kinetic']:.1e} J")
stiff.axhline(strain["springs"] * 100, color="C2", lw=1.5, label="springs (Verlet, 24 substeps)")
stiff.axhline(strain["theory"] * 100, color="k", ls=":", lw=1,
              label="weight below / springs crossing")
print(f"strain springs: top gap {strain['springs']:.5f}, max {strain['springs_max']:.5f}; "
      f"weight over the springs {strain['theory']:.5f} "
      f"({strain['springs'] / strain['theory'] - 1:+.1%}), over the structural alone "
      f"{strain['structural']:.5f}; with 10 % more mass {strain['heavier']:.5f} "
      f"({strain['heavier'] / strain['theory'] - 1:+.1%}); kinetic energy "
      f"{strain['springs_kinetic']:.1e} J")
stiff.set_xscale("log")
stiff.set_xlabel("XPBD iterations per substep")
stiff.set_ylabel("top gap's strain (%)")
stiff.set_title(f"Static strain, {strain['n']}² cloth, k = 300 N/m")
stiff.legend(fontsize=8)

# The free cloth's highest mode: the lattice's largest eigenvalue, in units of k/m.
n = stability["n"]
index = lambda i, j: j * n + i
springs = []
for j in range(n):
    for i in range(n):
        if i + 1 < n:
            springs.append((index(i, j), index(i + 1, j), 1.0, (1, 0)))
        if j + 1 < n:
            springs.append((index(i, j), index(i, j + 1), 1.0, (0, 1)))
        if i + 1 < n and j + 1 < n:
            springs.append((index(i, j), index(i + 1, j + 1), 0.5, (1, 1)))
            springs.append((index(i + 1, j), index(i, j + 1), 0.5, (-1, 1)))
K = np.zeros((2 * n * n, 2 * n * n))
for a, b, k, e in springs:
    e = np.array(e, float) / np.hypot(*e)
    block = k * np.outer(e, e)
    for p, q, sign in [(a, a, 1), (b, b, 1), (a, b, -1), (b, a, -1)]:
        K[2 * p:2 * p + 2, 2 * q:2 * q + 2] += sign * block
highest = np.linalg.eigvalsh(K)[-1]
lattice = 6.0 / highest  # the k where dt·ω_max = 2, over 4m/(6·dt²)
for run, style in zip(stability["runs"], ["o-", "x--"]):
    sweep = np.array(run["sweep"])
    blow.semilogy(sweep[:, 0], np.minimum(sweep[:, 1], 1e12), style, ms=4, mfc="none",
                  label=f"{run['integrator']}: stable to {run['largest'] / stability['predicted']:.4f}")
    print(f"stability {run['integrator']}: largest stable k {run['largest']:.2f} N/m = "
          f"{run['largest'] / stability['predicted']:.4f} × 4m/(6·dt²) = "
          f"{run['largest'] / stability['bound']:.3f} × the Gershgorin bound's")
print(f"stability: the {n}² lattice's highest ω² = {highest:.4f}·k/m, so dt·ω = 2 at "
      f"{lattice:.4f} × 4m/(6·dt²)")
blow.axvline(lattice, color="k", ls=":", lw=1, label=f"dt·ω_max = 2 (ω² = {highest:.3f}k/m)")
blow.axvline(1.0, color="grey", ls="-.", lw=1, label="ω² = 6k/m")
blow.set_xlabel("k / (4m/(6·dt²))   (the scene's bound: 0.5)")
blow.set_ylabel("growth of a disturbance in 2000 steps")
blow.set_title(f"Stability, free {n}² cloth, dt = 1/480 s")
blow.set_ylim(0.5, 2e12)
blow.legend(fontsize=8, loc="upper left")
fig.tight_layout()
fig.savefig(out, dpi=90)
try:  # a 64-colour palette: a third of the size
    from PIL import Image

    Image.open(out).convert("RGB").quantize(64).save(out, optimize=True)
except ImportError:
    pass
