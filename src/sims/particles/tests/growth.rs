//! Springs switched on live grow in (`growth.rs`): no jolt the frame after, no blow-up after,
//! and the rest shape's rest lengths once grown.

use super::*;

/// `text`'s body after 3 s (180 frames): sagging, or collapsed without some springs.
fn settled(text: &str) -> ParticlesSim {
    let mut sim = ParticlesSim::with_scene(scene(text));
    for _ in 0..180 {
        sim.step().unwrap();
    }
    sim
}

fn total(b: &Body) -> f64 {
    let (kinetic, potential, elastic) = b.energy(GRAVITY);
    kinetic + potential + elastic
}

fn fastest(b: &Body) -> f32 {
    b.velocity.iter().map(|v| v.length()).fold(0.0, f32::max)
}

/// An 8³ jelly that fell 3 s without its shear and genbo springs (folded onto the floor)
/// gets them back: the frame after, its energy and fastest node as before (switched on at
/// once, Verlet: +540 J, 25 m/s); once grown (0.5 s), every rest length is the rest
/// shape's (a jelly built with them), the growth over, the energy less than at the switch.
#[test]
fn springs_switched_on_in_a_collapsed_jelly_grow_in_without_a_jolt() {
    for integrator in Integrator::ALL {
        let mut sim = settled(&format!(
            "kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nshear = 0.0\nbend = 0.0\n\
             integrator = \"{}\"\n",
            integrator.name()
        ));
        let (e0, v0) = (total(body(&mut sim)), fastest(body(&mut sim)));
        sim.scene.body.shear = 0.5;
        sim.scene.body.bend = 0.3;
        sim.step().unwrap();
        let (e1, v1) = (total(body(&mut sim)), fastest(body(&mut sim)));
        println!("jelly {integrator:?}: {e0:.3} J, {v0:.2} m/s → {e1:.3} J, {v1:.2} m/s");
        assert!(e1 - e0 < 1.0, "{integrator:?}: {e0} J → {e1} J");
        assert!(v1 < v0 + 1.0, "{integrator:?}: {v0} m/s → {v1} m/s");
        for _ in 0..40 {
            sim.step().unwrap();
        }
        let rest = ParticlesSim::with_scene(sim.scene.clone());
        let State::Body(rest) = &rest.state else {
            unreachable!()
        };
        let b = body(&mut sim);
        assert!(b.growth.springs.is_empty(), "{integrator:?}: still growing");
        assert_eq!(b.springs, rest.springs, "{integrator:?}");
        assert!(b.links.iter().zip(&rest.links).all(|(l, r)| l == r));
        assert!(b.position.iter().all(|p| p.is_finite()));
    }
}

/// A 32² cloth that hung 3 s without shear springs (its cells sheared flat: shear springs
/// of nearly zero length) gets them back under the explicit integrators: 2 s later its total
/// energy is bounded, under 50 J (it had 7.6 J; the shear springs switched on at once held
/// 166 J and the cloth blew up: 10⁵ J and 1 900 m/s by 2 s).
#[test]
fn shear_springs_switched_on_in_a_collapsed_cloth_do_not_blow_it_up() {
    for integrator in [Integrator::Verlet, Integrator::Euler] {
        let mut sim = settled(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nshear = 0.0\n\
             integrator = \"{}\"\n",
            integrator.name()
        ));
        let e0 = total(body(&mut sim));
        sim.scene.body.shear = 0.5;
        let mut most = 0.0f64;
        for _ in 0..120 {
            sim.step().unwrap();
            most = most.max(total(body(&mut sim)));
        }
        let b = body(&mut sim);
        println!(
            "cloth {integrator:?}: {e0:.2} J → at most {most:.2} J, {:.2} J after 2 s, {:.2} m/s",
            total(b),
            fastest(b)
        );
        assert!(most < 50.0, "{integrator:?}: {e0} J → {most} J");
        assert!(b.growth.springs.is_empty());
    }
}
