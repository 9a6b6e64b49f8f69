//! The `fluidlab` binary end to end: simulate with export in both formats, stats, scenes, bench,
//! validation, refusals of bad input, and interrupted runs. One test binary, a module per idea.

mod bench;
mod export;
mod interrupt;
mod pipes;
mod refusals;
mod wording;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SCENE: &str = r#"description = "small test scene"
[container]
min = [0.0, 0.0, 0.0]
max = [0.4, 0.4, 0.2]
[[fluid]]
shape = "box"
min = [0.0, 0.0, 0.0]
max = [0.16, 0.2, 0.2]
[[fluid]]
shape = "sphere"
center = [0.3, 0.25, 0.1]
radius = 0.06
velocity = [0.0, -1.0, 0.0]
[params]
spacing = 0.02
"#;

fn fluidlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .args(args)
        .output()
        .expect("run fluidlab")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write_scene(dir: &Path) -> String {
    let path = dir.join("small.toml");
    std::fs::write(&path, SCENE).unwrap();
    path.to_string_lossy().into_owned()
}

fn frame_files(dir: &Path, extension: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(extension))
        .collect();
    names.sort();
    names
}
