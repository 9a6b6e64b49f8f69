//! The scene fuzzer: a scene file and a command line are untrusted input, so every preset of
//! every kind (`fluidlab::scene::PRESETS`, so a new kind is fuzzed as it lands), mutated the
//! ways a hand-edited or hostile file goes wrong, must end in a clean error or a short
//! successful run: never a panic, a hang or an abort.
//!
//! Each case takes a preset, applies 1–3 mutations (keys dropped; values replaced by 0, −x,
//! huge, tiny, NaN, ±∞, i64::MAX, other types; arrays lengthened and shortened; tables and
//! lines duplicated; lines deleted; the text cut short), then goes through both doors every
//! command uses: `sims::describe` (parse and validate) and `sims::open` (rescaled to a few
//! hundred elements, CPU backend) and one step. The process runs under a data-size limit
//! (`setrlimit`), which the memory checks read: a scene that needs more is refused with a
//! message, and an allocation that skips the checks aborts the test. Each case runs on its
//! own thread and fails when it takes longer than [`CASE_TIME_LIMIT`].
//!
//! `cargo test --release --test fuzz` runs [`CASES`] cases from a fixed seed (a few seconds);
//! the ignored `fuzz_long` takes a case count and seed from the environment for longer runs
//! (docs/testing.md). Every input that ever failed is kept in [`REGRESSIONS`].

use fluidlab::scene::{Source, PRESETS};
use fluidlab::sims::{self, Backend, OpenOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use toml::{Table, Value};

/// Cases of the fuzz test in the suite: 1 to 3 s on two cores in release mode.
const CASES: u32 = 2000;

/// The suite's fixed seed, so a failure reproduces (and CI never flakes on a new case).
const SEED: u64 = 0x5eed_f1d0;

/// Elements (particles, cells) the step runs with: enough for every stage to have neighbours,
/// few enough for a case to take milliseconds.
const ELEMENTS: u64 = 400;

/// Longest a case may take, validation, set-up and step together: a hang detector, far above
/// the milliseconds a case takes.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(20);

/// Bytes the process may allocate beyond what it holds when the fuzzer starts.
const MEMORY_CAP: u64 = 1 << 30;

/// Inputs that once failed (a panic, a hang or an abort), by what they exposed; each must
/// still end cleanly.
const REGRESSIONS: &[(&str, &str)] = &[
    (
        "a file cut short after `dt =`: the TOML error had no message",
        "[container]\nmin = [0.0, 0.0, 0.0]\nmax = [1.6, 1.0, 0.6]\n\n[params]\ndt =",
    ),
    (
        "a fountain stepping 1e-30 s: `--particles`' mean-life pilot followed it for 4e30 steps",
        "kind = \"particles\"\nscene = \"fountain\"\ndt = 1e-30\n[fountain]\nlifetime = 4.0\n",
    ),
];

/// How a case ended when it ended well.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Refused with a message.
    Refused,
    /// Validated, opened and stepped.
    Ran,
}

/// One mutation; the numbers pick a place (modulo the places there are) and a replacement.
#[derive(Clone, Debug)]
enum Mutation {
    /// Removes a key or an array element.
    Drop(usize),
    /// Replaces a value with [`replacement`] number `.1`.
    Replace(usize, usize),
    /// Appends a copy of an array's last element (or a number to an empty array).
    Lengthen(usize),
    /// Removes an array's last element.
    Shorten(usize),
    /// Duplicates one table of an array of tables (`[[fluid]]`, `[[obstacle]]`).
    DuplicateTable(usize),
    /// Writes a line of the text twice (a table header twice, a key twice).
    DuplicateLine(usize),
    /// Deletes a line of the text.
    DeleteLine(usize),
    /// Cuts the text short at a character.
    Truncate(usize),
}

/// How many values [`replacement`] knows.
const REPLACEMENTS: usize = 23;

/// Replacement number `which` for `original`: the edge values of every type, and the
/// original negated, scaled up and down by 1000, and nudged by 2, ½ and 1.5 (values that
/// mostly stay valid, so cases get past validation into the set-up and the step).
fn replacement(original: &Value, which: usize) -> Value {
    match which {
        0 => Value::Integer(0),
        1 => Value::Float(0.0),
        2 => map_numbers(original, &|x| -x),
        3 => Value::Float(1e30),
        4 => Value::Float(1e300),
        5 => Value::Float(1e-30),
        6 => Value::Float(f64::NAN),
        7 => Value::Float(f64::INFINITY),
        8 => Value::Float(f64::NEG_INFINITY),
        9 => Value::Integer(i64::MAX),
        10 => Value::Integer(i64::MIN),
        11 => Value::Integer(-1),
        12 => Value::String("x".into()),
        13 => Value::Boolean(true),
        14 => Value::Array(Vec::new()),
        15 => Value::Array(vec![Value::Float(0.5); 4]),
        16 => Value::Table(Table::new()),
        17 => map_numbers(original, &|x| x * 1e3),
        18 => map_numbers(original, &|x| x * 1e-3),
        19 => Value::Float(f64::from(f32::MAX) * 2.0),
        20 => map_numbers(original, &|x| x * 2.0),
        21 => map_numbers(original, &|x| x * 0.5),
        _ => map_numbers(original, &|x| x * 1.5),
    }
}

/// `value` with `f` applied to every number in it (integers stay integers where they can).
fn map_numbers(value: &Value, f: &dyn Fn(f64) -> f64) -> Value {
    match value {
        Value::Integer(n) => {
            let x = f(*n as f64);
            if x.fract() == 0.0 && x.abs() < 9e18 {
                Value::Integer(x as i64)
            } else {
                Value::Float(x)
            }
        }
        Value::Float(x) => Value::Float(f(*x)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_numbers(v, f)).collect()),
        other => other.clone(),
    }
}

/// A step of a path into a TOML document.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every path in `value`, parents before children.
fn paths(value: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let children: Vec<(Step, &Value)> = match value {
        Value::Table(table) => table
            .iter()
            .map(|(k, v)| (Step::Key(k.clone()), v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (Step::Index(i), v))
            .collect(),
        _ => Vec::new(),
    };
    for (step, child) in children {
        prefix.push(step);
        out.push(prefix.clone());
        paths(child, prefix, out);
        prefix.pop();
    }
}

fn at<'a>(root: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter()
        .try_fold(root, |value, step| match (step, value) {
            (Step::Key(k), Value::Table(t)) => t.get_mut(k),
            (Step::Index(i), Value::Array(a)) => a.get_mut(*i),
            _ => None,
        })
}

/// Applies one value-level mutation to `root`; the text-level ones are left to [`mutate`].
fn mutate_value(root: &mut Value, mutation: &Mutation) {
    let mut all = Vec::new();
    paths(root, &mut Vec::new(), &mut all);
    let pick = |index: usize| all.get(index % all.len().max(1)).cloned();
    match *mutation {
        Mutation::Drop(index) => {
            let Some(path) = pick(index) else { return };
            let (last, parent) = path.split_last().expect("paths are non-empty");
            match (at(root, parent), last) {
                (Some(Value::Table(t)), Step::Key(k)) => {
                    t.remove(k);
                }
                (Some(Value::Array(a)), Step::Index(i)) => {
                    a.remove(*i);
                }
                _ => {}
            }
        }
        Mutation::Replace(index, which) => {
            let Some(path) = pick(index) else { return };
            if let Some(value) = at(root, &path) {
                *value = replacement(value, which);
            }
        }
        Mutation::Lengthen(index) | Mutation::Shorten(index) | Mutation::DuplicateTable(index) => {
            let tables_only = matches!(mutation, Mutation::DuplicateTable(_));
            let arrays: Vec<Vec<Step>> = all
                .iter()
                .filter(|p| match at(&mut root.clone(), p) {
                    Some(Value::Array(items)) => !tables_only || items.iter().any(Value::is_table),
                    _ => false,
                })
                .cloned()
                .collect();
            let Some(path) = arrays.get(index % arrays.len().max(1)) else {
                return;
            };
            let Some(Value::Array(items)) = at(root, path) else {
                return;
            };
            match mutation {
                Mutation::Shorten(_) => {
                    items.pop();
                }
                Mutation::DuplicateTable(_) => {
                    if let Some(table) = items.iter().find(|v| v.is_table()).cloned() {
                        items.push(table);
                    }
                }

                _ => {
                    let last = items.last().cloned().unwrap_or(Value::Integer(7));
                    items.push(last);
                }
            }
        }
        Mutation::DuplicateLine(_) | Mutation::DeleteLine(_) | Mutation::Truncate(_) => {}
    }
}

/// `text` with `mutations` applied: value-level ones on the parsed document (written back as
/// TOML), then text-level ones on the lines.
fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut root = Value::Table(text.parse::<Table>().expect("presets parse"));
    for mutation in mutations {
        mutate_value(&mut root, mutation);
    }
    let mut text = toml::to_string(&root).unwrap_or_else(|_| text.to_string());
    for mutation in mutations {
        let lines: Vec<&str> = text.lines().collect();
        let line = |index: usize| index % lines.len().max(1);
        text = match *mutation {
            Mutation::DuplicateLine(index) if !lines.is_empty() => {
                let mut lines = lines.clone();
                lines.insert(line(index), lines[line(index)]);
                lines.join("\n")
            }
            Mutation::DeleteLine(index) if !lines.is_empty() => {
                let mut lines = lines.clone();
                lines.remove(line(index));
                lines.join("\n")
            }
            Mutation::Truncate(index) => text.chars().take(index % (text.len() + 1)).collect(),
            _ => text,
        };
    }
    text
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => any::<usize>().prop_map(Mutation::Drop),
        6 => (any::<usize>(), 0..REPLACEMENTS).prop_map(|(at, which)| Mutation::Replace(at, which)),
        1 => any::<usize>().prop_map(Mutation::Lengthen),
        1 => any::<usize>().prop_map(Mutation::Shorten),
        1 => any::<usize>().prop_map(Mutation::DuplicateTable),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// A preset (by index into [`PRESETS`]) and the mutations to apply.
fn case() -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0..PRESETS.len(), prop::collection::vec(mutation(), 1..=3))
}

/// Loads, validates, opens and steps `text` as a scene file: what every command does with one.
fn load_and_step(text: &str) -> Result<(), String> {
    let source = Source::parse(text, "fuzz", "fuzz.toml").map_err(|e| said(e.to_string()))?;
    sims::describe(&source).map_err(|e| said(format!("{e:#}")))?;
    let options = OpenOptions {
        backend: Backend::Cpu,
        elements: Some(ELEMENTS),
        ..OpenOptions::default()
    };
    let mut sim = sims::open(&source, &options).map_err(|e| format!("{e:#}"))?;
    sim.step().map_err(|e| format!("{e:#}"))
}

/// `message`, a scene error, after checking that it names the file (and its line where it has
/// one), then says something.
fn said(message: String) -> String {
    let rest = message
        .strip_prefix("fuzz.toml")
        .unwrap_or_else(|| panic!("an error that does not name the file: {message}"))
        .trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    assert!(
        !rest.trim().is_empty() && !rest.trim_start().starts_with("(in "),
        "an error that says nothing: {message}"
    );
    message
}

/// Runs one case on its own thread: a clean end is `Ok`; a panic is the failure, said with the
/// input. A run past [`CASE_TIME_LIMIT`] prints its input and ends the process, as an abort
/// does.
fn check(text: &str) -> Result<Outcome, String> {
    let (sender, receiver) = mpsc::channel();
    let input = text.to_string();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| load_and_step(&input));
        // The receiver is gone only after a timeout has failed the case already.
        let _ = sender.send(result);
    });
    let failure = |what: &str| format!("{what} on this input:\n{text}");
    match receiver.recv_timeout(CASE_TIME_LIMIT) {
        Ok(Ok(Ok(()))) => Ok(Outcome::Ran),
        Ok(Ok(Err(message))) if !message.trim().is_empty() => Ok(Outcome::Refused),
        Ok(Ok(Err(_))) => Err(failure("an empty error message")),
        Ok(Err(panic)) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(failure(&format!("a panic ({message})")))
        }
        Err(_) => {
            // Shrinking a hang would wait out the limit at every try: stop here, with the input.
            eprintln!(
                "{}",
                failure(&format!("no end within {} s", CASE_TIME_LIMIT.as_secs()))
            );
            std::process::exit(1);
        }
    }
}

/// Caps the data this process may allocate at [`MEMORY_CAP`] beyond what it holds now, once.
/// `fluidlab::host::available_memory` reads the limit, so the memory checks refuse what would
/// not fit; an allocation that bypasses them fails and aborts the process.
fn cap_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let held_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmData:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit write and read only the struct passed, which lives
        // on this stack frame; lowering the soft limit below the hard one is always allowed.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_DATA, &mut limit), 0);
            limit.rlim_cur = (held_kib * 1024 + MEMORY_CAP).min(limit.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_DATA, &limit), 0);
        }
    });
}

/// Runs `cases` cases from `seed`; panics with the smallest failing input proptest finds.
fn fuzz(cases: u32, seed: u64) {
    cap_memory();
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let counts = std::sync::Mutex::new((0u32, 0u32));
    let started = Instant::now();
    let result = runner.run(&case(), |(preset, mutations)| {
        let text = mutate(PRESETS[preset].source, &mutations);
        let outcome = check(&text).map_err(TestCaseError::fail)?;
        let mut counts = counts.lock().expect("counts");
        match outcome {
            Outcome::Refused => counts.0 += 1,
            Outcome::Ran => counts.1 += 1,
        }
        Ok(())
    });
    let (refused, ran) = *counts.lock().expect("counts");
    eprintln!(
        "fuzz: {cases} cases from seed {seed:#x} in {:.1} s: {refused} refused with a message, \
         {ran} ran a step",
        started.elapsed().as_secs_f64()
    );
    if let Err(error) = result {
        panic!("{error}");
    }
    // A fuzzer whose cases all fail validation tests nothing past it.
    assert!(
        ran >= cases / 20,
        "only {ran} of {cases} cases got past validation"
    );
}

#[test]
fn mutated_presets_end_in_a_clean_error_or_a_short_run() {
    fuzz(CASES, SEED);
}

/// For longer runs: `FLUIDLAB_FUZZ_CASES=100000 FLUIDLAB_FUZZ_SEED=7 cargo test --release
/// --test fuzz -- --ignored` (docs/testing.md).
#[test]
#[ignore = "long: run on demand with FLUIDLAB_FUZZ_CASES and FLUIDLAB_FUZZ_SEED"]
fn fuzz_long() {
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .map(|v| {
                v.parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
            })
            .unwrap_or(default)
    };
    let cases = number("FLUIDLAB_FUZZ_CASES", 10_000);
    let seed = number("FLUIDLAB_FUZZ_SEED", SEED);
    fuzz(
        u32::try_from(cases).expect("FLUIDLAB_FUZZ_CASES fits in 32 bits"),
        seed,
    );
}

#[test]
fn every_input_that_ever_failed_ends_cleanly() {
    cap_memory();
    for (what, text) in REGRESSIONS {
        check(text).unwrap_or_else(|failure| panic!("{what}: {failure}"));
    }
}

#[test]
fn the_mutations_reach_every_kind_of_damage() {
    let preset = PRESETS
        .iter()
        .find(|p| p.name == "dam-break")
        .expect("dam-break");
    let spacing_then = |mutations: &[Mutation]| mutate(preset.source, mutations);
    // Some replacement turns the spacing into NaN, and the loader refuses it by name.
    let nan = (0..1000)
        .map(|at| spacing_then(&[Mutation::Replace(at, 6)]))
        .find(|text| text.contains("spacing = nan"))
        .expect("a NaN spacing");
    assert_eq!(check(&nan), Ok(Outcome::Refused));
    // A duplicated fluid body overlaps the first.
    let twice = spacing_then(&[Mutation::DuplicateTable(0)]);
    assert_eq!(twice.matches("[[fluid]]").count(), 2, "{twice}");
    assert_eq!(check(&twice), Ok(Outcome::Refused));
    // The unmutated preset runs.
    assert_eq!(check(preset.source), Ok(Outcome::Ran));
}
