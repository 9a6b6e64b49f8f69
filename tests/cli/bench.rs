//! `bench` (stages, throughput, the density-error rule) and `validate`.

use super::*;

#[test]
fn bench_reports_stages_and_throughput_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path());
    let stdout = ok(&fluidlab(&[
        "bench",
        &scene,
        "--steps",
        "3",
        "--warmup",
        "1",
        "--backend",
        "cpu",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["steps"], 3);
    // The CPU launches no kernels (CUDA's count: tests/emulated_driver.rs).
    assert_eq!(report["kernel_launches_per_step"].as_f64(), Some(0.0));
    // A fixed count: exactly the scene's iterations, and the compression they reached.
    assert_eq!(report["iterations"].as_f64(), Some(4.0), "{report}");
    assert_eq!(report["rule"], "4 iterations");
    assert!(
        (0.0..0.05).contains(&report["compression"].as_f64().unwrap()),
        "{report}"
    );
    let particles = report["particles"].as_f64().unwrap();
    let rate = report["particle_steps_per_second"].as_f64().unwrap();
    let ms = report["ms_per_substep"].as_f64().unwrap();
    assert!(
        (rate - particles / (ms * 1e-3)).abs() < 1e-6 * rate,
        "{report}"
    );
    let stages: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages[..3],
        ["predict_positions", "build_grid", "find_neighbors"]
    );
    assert!(
        stages.contains(&"compute_lambda")
            && stages.contains(&"apply_delta")
            && stages.contains(&"xsph")
    );
    // --no-stage-timing: no stage is timed, so none is reported (the CPU once printed them).
    let stdout = ok(&fluidlab(&[
        "bench",
        &scene,
        "--steps",
        "1",
        "--warmup",
        "0",
        "--backend",
        "cpu",
        "--json",
        "--no-stage-timing",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["stages"], serde_json::json!([]), "{report}");
    // --particles rescales the spacing to reach about that many particles.
    let stdout = ok(&fluidlab(&[
        "bench",
        "dam-break",
        "--particles",
        "3000",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let n = report["particles"].as_f64().unwrap();
    assert!((n / 3000.0 - 1.0).abs() < 0.15, "{n} particles");
    // A size that does not fit in memory is skipped with the reason; the others still run.
    let output = fluidlab(&[
        "bench",
        "dam-break",
        "--particles",
        "2000,500000000",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let stdout = ok(&output);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("skipped size 500000000") && stderr.contains("GiB"),
        "{stderr}"
    );
    // Profiler mode: exactly N steps after the warm-up, one line.
    let stdout = ok(&fluidlab(&[
        "bench",
        &scene,
        "--warmup",
        "1",
        "--profile-steps",
        "2",
        "--backend",
        "cpu",
    ]));
    assert!(
        stdout.starts_with("profiled 2 steps of ")
            && stdout.contains(" after 1 warm-up step (")
            && stdout.lines().count() == 1,
        "{stdout}"
    );
}

/// Under the density-error rule, bench reports the iterations the rule needed and the error
/// they reached, at most the tolerance.
#[test]
fn bench_reports_the_iterations_the_density_error_rule_needed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rule.toml");
    std::fs::write(
        &path,
        "[container]\nmin = [0.0, 0.0, 0.0]\nmax = [0.3, 0.4, 0.2]\n[[fluid]]\nshape = \"box\"\n\
         min = [0.0, 0.0, 0.0]\nmax = [0.1, 0.3, 0.2]\n[params]\nmax_density_error = 0.0005\n\
         min_iterations = 2\nmax_iterations = 60\n",
    )
    .unwrap();
    let stdout = ok(&fluidlab(&[
        "bench",
        path.to_str().unwrap(),
        "--steps",
        "4",
        "--warmup",
        "4",
        "--backend",
        "cpu",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let iterations = report["iterations"].as_f64().unwrap();
    assert!((2.0..=60.0).contains(&iterations), "{report}");
    assert!(
        iterations > 2.0,
        "a collapsing column needs more than the minimum: {report}"
    );
    assert!(
        report["compression"].as_f64().unwrap() <= 0.0005,
        "{report}"
    );
    assert!(
        report["rule"]
            .as_str()
            .unwrap()
            .starts_with("until compression ≤ 0.0005"),
        "{report}"
    );
}

/// `fluidlab validate CASE` writes the case's CSV and PNG and prints its checks.
#[test]
fn validate_writes_curves_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("validation");
    let stdout = ok(&fluidlab(&[
        "validate",
        "dam-break",
        "--quick",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(stdout.contains("PASS dam break"), "{stdout}");
    assert!(stdout.contains("2 check(s), 0 failed"), "{stdout}");
    let csv = std::fs::read_to_string(out.join("dam-break.csv")).unwrap();
    assert!(
        csv.starts_with("T,Z\n") && csv.lines().count() > 20,
        "{csv}"
    );
    let png = image::open(out.join("dam-break.png")).expect("a PNG");
    assert_eq!((png.width(), png.height()), (800, 480));
    let output = fluidlab(&["validate", "no-such-case"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no validation case `no-such-case`"),
        "{stderr}"
    );
}
