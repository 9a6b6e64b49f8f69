//! The emulated CUDA driver (tests/emulation/driver/): a `libcuda.so` whose device is this CPU,
//! and one `libfluidlab_kernels_<module>.so` per `kernels/<module>.cu`, so `fluidlab` started
//! with their folder first on `LD_LIBRARY_PATH` runs its real CUDA host code (cudarc, every
//! kind's launches, buffers, events, module loading) with the kernels run on the CPU.
//!
//! [`build`] compiles them once per content of `kernels/` and the driver's sources (a folder
//! named by their hash under the target's temporary folder), with the rounding of a GPU (a·b + c
//! contracted into fused multiply-adds where this CPU has FMA, as nvcc does). Building needs a
//! C++20 compiler and `cuda.h` (build.rs's `fluidlab_emulated_driver`), the memcheck flavour
//! also gcc's libasan (`fluidlab_emulated_memcheck`).

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The text of the kernel source at `path` with each `#include "…"` of a file beside it or
/// below `kernels/` replaced by that file's text (once).
pub fn module_text(path: &Path) -> String {
    fn inline(path: &Path, seen: &mut BTreeSet<PathBuf>, out: &mut String) {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in text.lines() {
            let included = line
                .trim_start()
                .strip_prefix("#include \"")
                .and_then(|rest| rest.split_once('"'))
                .map(|(file, _)| file);
            match included {
                Some(file) => {
                    let beside = path.parent().unwrap().join(file);
                    let target = if beside.is_file() {
                        beside
                    } else {
                        root().join("kernels").join(file)
                    };
                    if seen.insert(target.clone()) {
                        inline(&target, seen, out);
                    }
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    let mut out = String::new();
    inline(path, &mut BTreeSet::new(), &mut out);
    out
}

/// A function defined in kernel source: its name, body, and whether it is a kernel.
#[derive(Debug)]
struct Definition {
    name: String,
    body: String,
    kernel: bool,
    /// The first argument of its `__launch_bounds__`, as written.
    launch_bound: Option<String>,
}

/// The source without comments and preprocessor lines (continuations included).
fn code_only(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for c in chars.by_ref() {
                    if previous == '*' && c == '/' {
                        break;
                    }
                    previous = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    let mut kept = String::with_capacity(out.len());
    let mut continued = false;
    for line in out.lines() {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end().ends_with('\\');
        if !directive {
            kept.push_str(line);
        }
        kept.push('\n');
    }
    kept
}

/// The index just past the bracket that closes the one at `open`.
fn closing(bytes: &[u8], open: usize, (left, right): (u8, u8)) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// Every function defined at file scope in `source` (comments and preprocessor lines ignored;
/// both branches of an `#ifdef` are kept).
fn definitions(source: &str) -> Vec<Definition> {
    let code = code_only(source);
    let bytes = code.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let (mut i, mut statement_start) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                // A brace at file scope that no signature opened (a struct, a namespace): skip it.
                i = closing(bytes, i, (b'{', b'}')).unwrap_or(bytes.len());
                statement_start = i;
            }
            b';' => {
                i += 1;
                statement_start = i;
            }
            b'(' => {
                let mut name_start = i;
                while name_start > 0 && bytes[name_start - 1].is_ascii_whitespace() {
                    name_start -= 1;
                }
                let name_end = name_start;
                while name_start > 0 && is_name(bytes[name_start - 1]) {
                    name_start -= 1;
                }
                let close = closing(bytes, i, (b'(', b')')).unwrap_or(bytes.len());
                let rest = code[close..].trim_start();
                let rest = rest.strip_prefix("const").unwrap_or(rest).trim_start();
                if rest.starts_with('{') && name_start < name_end {
                    let open = bytes.len() - rest.len();
                    let end = closing(bytes, open, (b'{', b'}')).unwrap_or(bytes.len());
                    found.push(Definition {
                        name: code[name_start..name_end].to_string(),
                        body: code[open..end].to_string(),
                        kernel: code[statement_start..name_start].contains("__global__"),
                        launch_bound: launch_bound(&code[statement_start..name_start]),
                    });
                    i = end;
                    statement_start = end;
                } else {
                    i = close;
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// The first argument of the `__launch_bounds__(…)` in a declaration's `head`.
fn launch_bound(head: &str) -> Option<String> {
    let (_, rest) = head.split_once("__launch_bounds__")?;
    let rest = rest.trim_start().strip_prefix('(')?;
    let mut depth = 0;
    let end = rest.find(|c| {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return true,
            ')' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
        false
    })?;
    Some(rest[..end].trim().to_string())
}

/// A kernel of a module, as [`kernels`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Whether its body, or a function it names (transitively), reaches `__syncthreads` or a
    /// warp shuffle.
    pub cooperative: bool,
    /// The most threads per block its `__launch_bounds__` allows, as written (an expression
    /// of the module's macros); none: the device's 1024.
    pub launch_bound: Option<String>,
}

/// Whether `text` holds `word` as a whole identifier.
fn holds_word(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].ends_with(is_name) && !text[at + word.len()..].starts_with(is_name)
    })
}

/// The kernels of `source` in order.
pub fn kernels(source: &str) -> Vec<Kernel> {
    let definitions = definitions(source);
    let mut cooperative: BTreeSet<&str> = definitions
        .iter()
        .filter(|d| d.body.contains("__syncthreads") || d.body.contains("__shfl_"))
        .map(|d| d.name.as_str())
        .collect();
    loop {
        let more: Vec<&str> = definitions
            .iter()
            .filter(|d| !cooperative.contains(d.name.as_str()))
            .filter(|d| cooperative.iter().any(|c| holds_word(&d.body, c)))
            .map(|d| d.name.as_str())
            .collect();
        if more.is_empty() {
            break;
        }
        cooperative.extend(more);
    }
    definitions
        .iter()
        .filter(|d| d.kernel)
        .map(|d| Kernel {
            name: d.name.clone(),
            cooperative: cooperative.contains(d.name.as_str()),
            launch_bound: d.launch_bound.clone(),
        })
        .collect()
}

/// Every `kernels/<module>.cu`: its name and path.
pub fn modules() -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(root().join("kernels"))
        .expect("kernels/")
        .filter_map(|entry| {
            let path = entry.expect("kernels/ entry").path();
            let name = path.file_stem()?.to_string_lossy().into_owned();
            (path.extension()? == "cu").then_some((name, path))
        })
        .collect();
    found.sort();
    found
}

/// The folder of the emulated driver's sources.
fn driver_sources() -> PathBuf {
    root().join("tests/emulation/driver")
}

/// The hash of every file under `dir`, by path and content.
fn hash_tree(dir: &Path, hasher: &mut impl Hasher) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            hash_tree(&path, hasher);
        } else {
            path.file_name().hash(hasher);
            std::fs::read(&path).expect("read").hash(hasher);
        }
    }
}

fn compile(args: &[String], what: &str) {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let output = Command::new(&compiler)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} does not run ({e})"));
    assert!(
        output.status.success(),
        "{compiler} failed on {what}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// How the emulated driver's kernels are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// Optimised, as fast as the emulation goes.
    Plain,
    /// With AddressSanitizer: device memory is heap memory with red zones, so a kernel's (or a
    /// copy's) access outside its buffer stops the process with the access and the kernel's
    /// stack, as compute-sanitizer's memcheck does on a GPU. Needs gcc's libasan.
    Memcheck,
}

/// The built driver: its folder, and what a process needs to run on it.
#[derive(Clone, Debug)]
pub struct Driver {
    /// The folder to put first on `LD_LIBRARY_PATH` (also holds `selftest`).
    pub dir: PathBuf,
    /// How it was built.
    pub flavour: Flavour,
    asan_runtime: Option<PathBuf>,
}

impl Driver {
    /// `command` set up to run on this driver: its folder first on the library path, and for
    /// [`Flavour::Memcheck`] the sanitizer's runtime preloaded, stopping at the first error.
    pub fn setup(&self, command: &mut Command) {
        let mut path = self.dir.as_os_str().to_owned();
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            path.push(":");
            path.push(old);
        }
        command.env("LD_LIBRARY_PATH", path);
        if let Some(runtime) = &self.asan_runtime {
            command.env("LD_PRELOAD", runtime).env(
                "ASAN_OPTIONS",
                "detect_leaks=0:detect_stack_use_after_return=0:halt_on_error=1",
            );
        }
    }
}

/// gcc's AddressSanitizer runtime, where the compiler has one.
pub fn asan_runtime() -> Option<PathBuf> {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let output = Command::new(compiler)
        .arg("-print-file-name=libasan.so")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    // An unknown file name is printed back bare.
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// Builds the emulated driver of `flavour` (once for these sources; later calls find it). It
/// also holds `selftest`, the driver's own check (tests/emulation/driver/selftest.cpp) with its
/// kernels. Panics with the compiler's message on failure, or for [`Flavour::Memcheck`] where
/// [`asan_runtime`] finds none.
pub fn build(flavour: Flavour) -> Driver {
    static BUILT: std::sync::Mutex<Vec<Driver>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(driver) = built.iter().find(|d| d.flavour == flavour) {
        return driver.clone();
    }
    let asan_runtime = match flavour {
        Flavour::Plain => None,
        Flavour::Memcheck => {
            Some(asan_runtime().expect("build.rs found gcc's libasan, and it is gone: rebuild"))
        }
    };
    let driver = Driver {
        dir: build_once(flavour),
        flavour,
        asan_runtime,
    };
    built.push(driver.clone());
    driver
}

fn build_once(flavour: Flavour) -> PathBuf {
    let emulation = root().join("tests/emulation");
    // The folder build.rs found cuda.h in (`fluidlab_emulated_driver`).
    let Some(include) = option_env!("FLUIDLAB_CUDA_INCLUDE") else {
        panic!("build.rs found no cuda.h: the tests that build the emulated driver are ignored");
    };
    let mut flags: Vec<String> = [
        "-std=c++20",
        "-fPIC",
        "-fvisibility=hidden",
        "-ffp-contract=fast",
    ]
    .map(String::from)
    .to_vec();
    match flavour {
        Flavour::Plain => flags.push("-O2".into()),
        Flavour::Memcheck => flags.extend(
            ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"].map(String::from),
        ),
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        flags.push("-mfma".into());
    }
    flags.push(format!("-I{include}"));
    let mut modules = modules();
    modules.push(("selftest".into(), driver_sources().join("selftest.cu")));
    // Each module's kernel table, generated here: it is part of what the folder is built from.
    let tables: Vec<String> = modules
        .iter()
        .map(|(_, path)| {
            kernels(&module_text(path))
                .iter()
                .map(|k| {
                    let bound = k.launch_bound.as_deref().unwrap_or("1024");
                    format!("KERNEL({}, {}, ({bound}))\n", k.name, k.cooperative)
                })
                .collect()
        })
        .collect();
    // The folder is named by everything its libraries come from: the sources, the tables, the
    // flags (FMA or not) and the compiler.
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hash_tree(&root().join("kernels"), &mut hasher);
    hash_tree(&driver_sources(), &mut hasher);
    std::fs::read(emulation.join("cuda_builtins.h"))
        .unwrap()
        .hash(&mut hasher);
    tables.hash(&mut hasher);
    flags.hash(&mut hasher);
    Command::new(&compiler)
        .arg("--version")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default()
        .hash(&mut hasher);
    let suffix = match flavour {
        Flavour::Plain => "plain",
        Flavour::Memcheck => "memcheck",
    };
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emulated-driver");
    let dir = parent.join(format!("{:016x}-{suffix}", hasher.finish()));
    if dir.is_dir() {
        // Marked as used now: the newest folder is the one in use (scripts/emulated-gpu.sh), and
        // one in use is not cleared as stale.
        let _ =
            std::fs::File::open(&dir).and_then(|f| f.set_modified(std::time::SystemTime::now()));
        return dir;
    }
    // Built beside, then renamed: another test process building at the same time cannot see a
    // half-built folder.
    let building = parent.join(format!("building-{suffix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building).expect("the emulated driver's folder");
    let sources = driver_sources();
    std::thread::scope(|scope| {
        let (building, flags, sources) = (&building, &flags, &sources);
        scope.spawn(move || {
            let mut args = flags.clone();
            args.extend(["-shared".into(), "-ldl".into(), "-o".into()]);
            args.push(building.join("libcuda.so").display().to_string());
            for file in [
                "driver.cpp",
                "launches.cpp",
                "arrays.cpp",
                "gl_interop.cpp",
                "graphs.cpp",
            ] {
                args.push(sources.join(file).display().to_string());
            }
            compile(&args, "the emulated driver");
            std::os::unix::fs::symlink("libcuda.so", building.join("libcuda.so.1"))
                .expect("libcuda.so.1");
            let mut args = flags.clone();
            args.push(sources.join("selftest.cpp").display().to_string());
            args.extend(["-o".into(), building.join("selftest").display().to_string()]);
            args.extend([
                format!("-L{}", building.display()),
                "-lcuda".into(),
                "-Wl,-rpath,$ORIGIN".into(),
            ]);
            compile(&args, "the emulated driver's self-test");
        });
        for ((module, path), lines) in modules.iter().zip(&tables) {
            scope.spawn(move || {
                let table = building.join(format!("{module}.kernels.inc"));
                std::fs::write(&table, lines).expect("the kernel table");
                let mut args = flags.clone();
                args.extend([
                    "-shared".into(),
                    // Static locals of inline functions out of COMDAT groups, so every
                    // __shared__ array fits one section (kernels.cpp's shared-memory poison).
                    "-fno-weak".into(),
                    format!("-DMODULE_SOURCE=\"{}\"", path.display()),
                    format!("-DMODULE_TABLE=\"{}\"", table.display()),
                    format!("-I{}", root().join("kernels").display()),
                    sources.join("kernels.cpp").display().to_string(),
                    "-o".into(),
                    building
                        .join(format!("libfluidlab_kernels_{module}.so"))
                        .display()
                        .to_string(),
                ]);
                compile(&args, &path.display().to_string());
            });
        }
    });
    if std::fs::rename(&building, &dir).is_err() {
        // Another process finished first: use its folder.
        let _ = std::fs::remove_dir_all(&building);
        assert!(
            dir.is_dir(),
            "the emulated driver's folder {}",
            dir.display()
        );
    }
    // Builds of this flavour from other sources, untouched for a day, are not used again (a
    // younger one may still be in use by a process of another checkout state).
    let day = std::time::Duration::from_secs(86_400);
    for entry in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > day));
        if name.ends_with(&format!("-{suffix}")) && entry.path() != dir && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    dir
}

/// `command` run on `driver`.
pub fn on_the_driver(mut command: Command, driver: &Driver) -> Output {
    driver.setup(&mut command);
    command.output().expect("the command starts")
}

/// `command` run on `driver`, which must succeed: its stdout and stderr.
pub fn succeeds(command: Command, driver: &Driver) -> (String, String) {
    let output = on_the_driver(command, driver);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Its stdout and stderr as text.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The largest difference between two runs' floats (as bits); infinite for runs of other
/// sizes or a NaN.
#[allow(dead_code)] // tests/emulated_driver.rs compares no runs' floats
pub fn worst(a: &[u32], b: &[u32]) -> f32 {
    if a.len() != b.len() {
        return f32::INFINITY;
    }
    a.iter()
        .zip(b)
        // A NaN on either side is infinitely far (f32::max would drop it).
        .map(
            |(x, y)| match (f32::from_bits(*x) - f32::from_bits(*y)).abs() {
                d if d.is_nan() => f32::INFINITY,
                d => d,
            },
        )
        .fold(0.0, f32::max)
}

/// The rest of the first line of `stdout` after `what` (a run's printed figure).
#[allow(dead_code)] // tests/emulated_driver.rs reads no printed figures
pub fn line(stdout: &str, what: &str) -> String {
    stdout
        .split_once(what)
        .and_then(|(_, rest)| rest.lines().next())
        .unwrap_or_else(|| panic!("no {what:?} line: {stdout}"))
        .to_string()
}
