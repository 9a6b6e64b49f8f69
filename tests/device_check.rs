//! scripts/device-check.sh without a GPU: a stand-in for the fluidlab binary (a shell script that
//! prints its arguments, failing where told) walks the script's steps, so its order, its PARTS
//! choice, its summary and the files it leaves (the device call brings back at most 8) are
//! checked here before a GPU session spends its minutes on them.

use std::path::Path;
use std::process::Command;

/// Runs the script with a stand-in binary that fails when its arguments contain `fail_on`,
/// writes a statistics line (energy 0, as the pool's springs at rest) where `--stats` names a
/// file and one file into the folder `--export` names, and with `--json` prints a graphed
/// frame's launch calls (3), so the steps that read what the binary wrote see output of their
/// own run; returns
/// (exit success, summary.txt, the names of the files in $OUT). `env`: the script's variables
/// (PARTS, BUDGET, DOCTOR).
fn device_check(dir: &Path, env: &[(&str, &str)], fail_on: &str) -> (bool, String, Vec<String>) {
    let bin = dir.join("fluidlab");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\necho \"stand-in $*\"\ncase \"$*\" in *'{fail_on}'*) exit 3;; esac\n\
             prev=\nfor a in \"$@\"; do\n  [ \"$prev\" = --stats ] && \
             echo '{{\"step\":0,\"time\":0.0,\"energy\":0.0,}}' > \"$a\"\n  \
             [ \"$prev\" = --export ] && mkdir -p \"$a\" && echo frame > \"$a/frame.npy\"\n  \
             prev=$a\ndone\ncase \"$*\" in *--json*) echo '{{\"launch_calls_per_step\": 3.0}}';; esac\n\
             exit 0\n"
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    let out = dir.join("out");
    let mut command = Command::new("bash");
    command
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/device-check.sh"))
        .env("FLUIDLAB_BIN", &bin)
        .env("OUT", &out)
        .env("FLUIDLAB_SKIP_GL", "1")
        // The stand-in has no GPU tools: compute-sanitizer and nvidia-smi are looked up on a
        // PATH that holds the shell's basics only.
        .env("PATH", "/usr/bin:/bin");
    command.envs(env.iter().copied());
    let status = command.output().unwrap().status;
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    (status.success(), summary, files)
}

fn steps(summary: &str) -> Vec<&str> {
    summary
        .lines()
        .filter(|l| l.starts_with("PASS ") || l.starts_with("FAIL ") || l.starts_with("SKIP "))
        .collect()
}

#[test]
fn every_kind_runs_in_order_and_the_logs_fit_the_device_calls_eight_files() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, summary, files) = device_check(dir.path(), &[], "no such argument");
    assert!(ok, "{summary}");
    assert!(
        summary.trim_end().ends_with("device-check: all PASS"),
        "{summary}"
    );
    let steps = steps(&summary);
    let first = |what: &str| {
        steps
            .iter()
            .position(|s| s.contains(what))
            .unwrap_or_else(|| panic!("no step with `{what}`:\n{summary}"))
    };
    assert!(steps[0].contains("doctor"), "{summary}");
    // PBF's benchmarks (the GPU issue's targets) before the other kinds' steps; the CPU's
    // benchmark, which says nothing about the GPU, last: the first the budget cuts.
    let order = [
        first("~1M particles"),
        first("bench cuda 10000000"),
        first("ink:"),
        first("ink multigrid"),
        first("pool:"),
        first("particles:"),
        first("bench cpu 100000"),
    ];
    assert_eq!(order[6], steps.len() - 1, "{summary}");
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "{order:?}\n{summary}"
    );
    assert!(files.len() <= 8, "{files:?}");
}

#[test]
fn parts_runs_the_doctor_and_only_the_kinds_named() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, summary, _) = device_check(dir.path(), &[("PARTS", "pool")], "no such argument");
    assert!(ok, "{summary}");
    let steps = steps(&summary);
    assert!(steps[0].contains("doctor"), "{summary}");
    assert!(steps.len() > 2, "{summary}");
    assert!(steps[1..].iter().all(|s| s.contains("pool:")), "{summary}");
}

#[test]
fn a_failing_step_is_named_and_fails_the_script_while_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, summary, _) = device_check(dir.path(), &[("PARTS", "ink particles")], "fountain");
    assert!(!ok, "{summary}");
    assert!(
        summary.contains("device-check: some checks FAILED"),
        "{summary}"
    );
    let steps = steps(&summary);
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("FAIL particles: bench cuda fountain 1M (exit 3")),
        "{summary}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.starts_with("PASS particles: bench cuda cloth")),
        "{summary}"
    );
    assert!(
        steps.iter().any(|s| s.starts_with("PASS ink:")),
        "{summary}"
    );
    // The second call repeats the failed step's part only, without the doctor that passed.
    assert!(
        summary.contains("next call: PARTS=\"particles\" DOCTOR=0 "),
        "{summary}"
    );
}

/// A budget spent before the first step (less than the 15 s a step needs) cuts every step, the
/// doctor's too: the summary names the parts for the next call, with the doctor (no
/// DOCTOR=0); everything passing names none (the first test's summary ends in "all PASS").
#[test]
fn the_steps_the_budget_cuts_are_named_for_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("PARTS", "ink pool"), ("BUDGET", "14")];
    let (ok, summary, _) = device_check(dir.path(), &env, "no such argument");
    assert!(!ok, "{summary}");
    let steps = steps(&summary);
    assert!(steps[0].starts_with("SKIP doctor"), "{summary}");
    assert!(steps.iter().all(|s| s.starts_with("SKIP ")), "{summary}");
    assert!(
        summary.contains("next call: PARTS=\"ink pool\" (the parts"),
        "{summary}"
    );
}

/// DOCTOR=0 (a second call with the binary whose doctor passed): no doctor step; the kinds'
/// steps run.
#[test]
fn doctor_0_leaves_the_doctor_out() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("PARTS", "pool"), ("DOCTOR", "0")];
    let (ok, summary, _) = device_check(dir.path(), &env, "no such argument");
    assert!(ok, "{summary}");
    assert!(summary.contains("doctor: not run (DOCTOR=0)"), "{summary}");
    let steps = steps(&summary);
    assert!(!steps.is_empty(), "{summary}");
    assert!(steps.iter().all(|s| s.contains("pool:")), "{summary}");
    assert!(!summary.contains("next call"), "{summary}");
}
