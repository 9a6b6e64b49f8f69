//! Measurements (ignored; docs/particles/physics.md, "Why the folded jelly stays folded" and
//! "Why the regrown cloth runs hot"): bodies tangled while they lacked springs, after the
//! springs grow back. `cargo test --release --lib -- --ignored --nocapture
//! particles::tests::tangles`.

use super::*;
use crate::sims::pool::drops::Rng;
use std::collections::HashMap;

/// `text`'s body after `frames` frames.
fn after(text: &str, frames: usize) -> ParticlesSim {
    let mut sim = ParticlesSim::with_scene(scene(text));
    for _ in 0..frames {
        sim.step().unwrap();
    }
    sim
}

/// Strain energy by spring kind [structural, shear, bending/genbo], J.
fn by_kind(b: &Body) -> [f64; 3] {
    let mut e = [0.0; 3];
    for (s, k) in b.springs.iter().zip(&b.kinds) {
        let l = b.position[s.a as usize].distance(b.position[s.b as usize]);
        e[*k as usize] += 0.5 * f64::from(s.stiffness) * f64::from(l - s.rest).powi(2);
    }
    e
}

/// A cloth's creases: edges whose two triangles are folded past 90°.
fn creases(b: &Body) -> usize {
    let mut normals: HashMap<(u32, u32), Vec<Vec3>> = HashMap::new();
    for t in &b.triangles {
        let p = t.map(|k| b.position[k as usize]);
        let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        for (x, y) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            normals.entry((x.min(y), x.max(y))).or_default().push(n);
        }
    }
    let folded = |n: &Vec<Vec3>| n.len() == 2 && n[0].dot(n[1]) < 0.0;
    normals.values().filter(|n| folded(n)).count()
}

fn jelly_line(tag: &str, b: &Body) {
    let e = by_kind(b);
    let top = b.position.iter().map(|p| p.y).fold(f32::MIN, f32::max);
    let floor = b.position.iter().filter(|p| p.y == 0.0).count();
    println!(
        "{tag}: strain {:.1}/{:.1}/{:.1}/{:.2} J (structural/shear/genbo/volume), kinetic {:.3} \
         J, {} of 343 cells inside out, highest node {top:.3} m, {floor} nodes at y = 0",
        e[0],
        e[1],
        e[2],
        b.cells.energy(&b.position),
        b.energy(GRAVITY).0,
        b.cells.inverted(&b.position)
    );
}

/// The 8³ jelly folded 3 or 6 s without shear and genbo springs and without the volume term,
/// at 12 or 48 substeps, each integrator; then both on, with the volume term off or at the
/// preset's 100 Pa, each node lifted by up to 0, 10 µm or 1 mm at the switch, damped or not;
/// 0.5, 1.5 and 6 s on.
#[test]
#[ignore]
fn folded_jelly() {
    for integrator in Integrator::ALL {
        for (substeps, folded) in [(12, 180), (12, 360), (48, 180)] {
            let sim = after(
                &format!(
                    "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nshear = 0.0\n\
                     bend = 0.0\nvolume_stiffness = 0.0\nintegrator = \"{}\"\n\
                     substeps = {substeps}\n",
                    integrator.name()
                ),
                folded,
            );
            let State::Body(start) = &sim.state else {
                unreachable!()
            };
            let tag = format!("{integrator:?} ×{substeps}, folded {} s", folded / 60);
            jelly_line(&tag, start);
            let cases = [(0.0f32, 0.3f32), (0.0, 0.0), (1e-5, 0.3), (1e-3, 0.3)];
            let moduli = [0.0, crate::sims::particles::scene::VOLUME_STIFFNESS];
            for ((lift, damping), modulus) in cases.into_iter().flat_map(|c| moduli.map(|k| (c, k)))
            {
                let mut run = ParticlesSim::with_scene(sim.scene.clone());
                let mut b = start.clone();
                let mut rng = Rng::new(7);
                for (p, q) in b.position.iter_mut().zip(b.previous.iter_mut()) {
                    let dy = lift * rng.unit();
                    (p.y, q.y) = (p.y + dy, q.y + dy);
                }
                run.state = State::Body(b);
                run.dt_before = sim.dt_before;
                run.applied = sim.applied.clone();
                run.scene.body.damping = damping;
                run.scene.body.shear = 0.5;
                run.scene.body.bend = 0.3;
                run.scene.body.volume_stiffness = modulus;
                for frame in 1..=360 {
                    run.step().unwrap();
                    if [30, 90, 360].contains(&frame) {
                        let t = frame as f32 / 60.0;
                        let what = format!(
                            "{tag}, lifted {lift:e} m, damping {damping}, volume {modulus} Pa, \
                             +{t} s"
                        );
                        jelly_line(&what, body(&mut run));
                    }
                }
            }
        }
    }
}

/// The 32² cloth hung 3 s without shear springs (and, for comparison, with them), shear 0.5
/// then: per integrator, substeps, damping and `grow_seconds`, 2, 10 and 30 s on.
#[test]
#[ignore]
fn regrown_cloth() {
    let cases = [
        (Integrator::Verlet, 0.5, 24, 0.2, 0.5),
        (Integrator::Verlet, 0.0, 24, 0.2, 0.5),
        (Integrator::Verlet, 0.0, 96, 0.2, 0.5),
        (Integrator::Verlet, 0.0, 24, 2.0, 0.5),
        (Integrator::Verlet, 0.0, 24, 0.2, 2.0),
        (Integrator::Verlet, 0.0, 24, 0.2, 5.0),
        (Integrator::Euler, 0.0, 24, 0.2, 0.5),
        (Integrator::Euler, 0.0, 96, 0.2, 0.5),
        (Integrator::Xpbd, 0.0, 24, 0.2, 0.5),
        (Integrator::Xpbd, 0.0, 96, 0.2, 0.5),
    ];
    for (integrator, shear, substeps, damping, grow) in cases {
        let mut sim = after(
            &format!(
                "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nshear = {shear}\n\
                 integrator = \"{}\"\nsubsteps = {substeps}\ndamping = {damping}\n\
                 grow_seconds = {grow}\n",
                integrator.name()
            ),
            180,
        );
        let tag =
            format!("{integrator:?} shear {shear} ×{substeps} damping {damping} grow {grow} s");
        println!("{tag}: {} creases before", creases(body(&mut sim)));
        sim.scene.body.shear = 0.5;
        let mut most = 0.0f64;
        for frame in 1..=1800 {
            sim.step().unwrap();
            let b = body(&mut sim);
            most = most.max(b.energy(GRAVITY).0);
            if [120, 600, 1800].contains(&frame) {
                let e = by_kind(b);
                let fastest = b.velocity.iter().map(|v| v.length()).fold(0.0, f32::max);
                println!(
                    "{tag}, +{} s: kinetic {:.3} J (at most {most:.2} J), fastest {fastest:.2} \
                     m/s, strain {:.2}/{:.2} J (structural/shear), {} creases",
                    frame / 60,
                    b.energy(GRAVITY).0,
                    e[0],
                    e[1],
                    creases(b)
                );
            }
        }
    }
}
