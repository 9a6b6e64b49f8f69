//! The kernels without a GPU (tests only): a kind's `tests/emulation/<name>.cpp` includes its
//! `kernels/*.cu` through the CUDA shims there and is compiled by the host's C++20 compiler
//! (`CXX`, else `c++`), so its kernels run on the CPU thread by thread against the kind's CPU
//! solver. Every kind compiles its emulation here, with the same flags; where build.rs finds no
//! compiler, the tests that need one are marked ignored with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// How the emulation rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// No contraction: each operation rounds, as on the CPU solver (the emulation can match it
    /// bit for bit).
    Separate,
    /// a·b + c contracted into one fused multiply-add where the compiler can, as nvcc does
    /// (on x86-64 only when this CPU has FMA; otherwise as `Separate`, and a note says so).
    Gpu,
}

impl Rounding {
    /// [`Rounding::Gpu`] if `contract`, else [`Rounding::Separate`].
    pub fn contracted(contract: bool) -> Rounding {
        if contract {
            Rounding::Gpu
        } else {
            Rounding::Separate
        }
    }
}

/// One change of one kernel file's text: a mutant the emulation comparison must catch.
#[derive(Clone, Copy, Debug)]
pub struct Mutation<'a> {
    /// The file, below `kernels/`.
    pub file: &'a str,
    /// The text to change (its first occurrence; the file must have it).
    pub from: &'a str,
    /// What replaces it.
    pub to: &'a str,
}

/// Compiles `tests/emulation/<source>` into `output`, rounding as `rounding`. With `mutation`,
/// the includes come from a copy of `kernels/` (beside `output`) with that one change, so a
/// kernel file's own includes find their copies too.
pub fn compile(
    source: &str,
    output: &Path,
    rounding: Rounding,
    mutation: Option<Mutation>,
) -> PathBuf {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels");
    let mut flags = vec!["-std=c++20", "-O2", "-pthread", "-x", "c++"];
    match rounding {
        Rounding::Separate => flags.push("-ffp-contract=off"),
        Rounding::Gpu => {
            flags.push("-ffp-contract=fast");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("fma") {
                flags.push("-mfma");
            } else {
                println!("note: this CPU has no FMA: the GPU-like emulation rounds like the CPU");
            }
        }
    }
    let include = match mutation {
        None => kernels,
        Some(Mutation { file, from, to }) => {
            let copy = output.with_extension("kernels");
            copy_tree(&kernels, &copy);
            let path = copy.join(file);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("kernels/{file} to mutate: {e}"));
            assert!(
                text.contains(from),
                "kernels/{file} has no `{from}` to mutate"
            );
            std::fs::write(&path, text.replacen(from, to, 1)).expect("the mutant");
            copy
        }
    };
    let result = Command::new(&compiler)
        .args(&flags)
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(root.join("tests/emulation"))
        .arg(root.join("tests/emulation").join(source))
        .arg("-o")
        .arg(output)
        .output();
    match result {
        Ok(out) if out.status.success() => output.to_path_buf(),
        Ok(out) => panic!(
            "{compiler} failed on tests/emulation/{source}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "build.rs found a C++20 compiler, and {compiler} does not run now ({e}): rebuild \
             (touch build.rs)"
        ),
    }
}

/// Runs the compiled emulation `program` on `input` (written to a file beside a fresh output
/// file, passed as `program INPUT OUTPUT ARGS...`) and returns what it wrote; panics, with its
/// exit status, when it fails.
pub fn run(program: &Path, input: &[u8], args: &[String]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (input_path, output_path) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    std::fs::write(&input_path, input).expect("write the emulation's input");
    let status = Command::new(program)
        .arg(&input_path)
        .arg(&output_path)
        .args(args)
        .status()
        .expect("run the emulation");
    assert!(
        status.success(),
        "the emulation {} failed: {status}",
        program.display()
    );
    std::fs::read(&output_path).expect("read the emulation's output")
}

/// Copies the folder `from` (files and folders) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the kernels' copy");
    for entry in std::fs::read_dir(from).expect("kernels/") {
        let entry = entry.expect("kernels/ entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("kernels/ entry type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a kernel file's copy");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutation_changes_only_the_copy_and_names_what_it_misses() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("probe");
        let copy = output.with_extension("kernels");
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels"),
            &copy,
        );
        let original = std::fs::read_to_string(copy.join("pool.cu")).unwrap();
        assert!(
            copy.join("common/vec.cuh").is_file(),
            "subfolders are copied"
        );
        let missing = std::panic::catch_unwind(|| {
            compile(
                "pool.cpp",
                &output,
                Rounding::Separate,
                Some(Mutation {
                    file: "pool.cu",
                    from: "no such text in any kernel",
                    to: "",
                }),
            )
        });
        assert!(
            missing.is_err(),
            "a mutation whose text is not there must fail"
        );
        let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/pool.cu");
        assert_eq!(std::fs::read_to_string(kernels).unwrap(), original);
    }
}
